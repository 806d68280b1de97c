import { z } from "zod";
import { zAllowedHost, zNetworkMode, zSandboxLimits } from "./policy";

// The `sandbox` run event: what an attempt's sandbox enforced (when it started), each
// connection its egress proxy refused, and how it ended (with the limit that ended it, if one
// did), and the model API's usage as Airlock's model gateway saw it. Written by the worker, never by an agent: an agent's stdout can only produce agent
// events (zAgentEvent), so no line it prints can claim to be one of these.

export const zSandboxKind = z.enum(["bubblewrap", "kubernetes", "none"]);
export const zLimitName = z.enum(["memory", "processes", "cpu", "disk"]);

export const zSandboxStarted = z.object({
  phase: z.literal("started"),
  kind: zSandboxKind,
  /** Why there is no sandbox (kind "none"): the admin's setting that allowed it. */
  unsandboxedReason: z.string().max(500).nullable(),
  network: z.object({ mode: zNetworkMode, allowedHosts: z.array(zAllowedHost).max(200) }),
  limits: zSandboxLimits.nullable(),
  /** What the agent runs as, in words ("uid 1000 in its own user namespace (host uid 2000123)"). */
  user: z.string().max(200).nullable(),
  /** The model API's host when the agent reaches it through Airlock's gateway (the key held outside). */
  modelGateway: z.string().max(300).nullish(),
});

export const zSandboxBlocked = z.object({
  phase: z.literal("blocked"),
  host: z.string().max(300),
  port: z.number().int().min(0).max(65535),
  at: z.iso.datetime({ offset: true }),
  reason: z.string().max(300),
});

export const zSandboxEnded = z.object({
  phase: z.literal("ended"),
  /** The limit that ended the attempt, or null. */
  limit: zLimitName.nullable(),
  /** "killed: memory limit 4 GiB (4.1 GiB in use)", or null. */
  reason: z.string().max(500).nullable(),
  peakMemoryMb: z.number().min(0),
  peakProcesses: z.number().int().min(0),
  cpuSeconds: z.number().min(0),
  blockedConnections: z.number().int().min(0),
});

const zTokens = z.number().int().min(0);

/** The attempt's model usage so far (cumulative, per model) as the model API answered the gateway. */
export const zSandboxMetered = z.object({
  phase: z.literal("metered"),
  calls: z.number().int().min(0),
  models: z
    .array(z.object({ model: z.string().max(200).nullable(), inputTokens: zTokens, outputTokens: zTokens, cacheReadTokens: zTokens, cacheWriteTokens: zTokens }))
    .max(50),
});

export const zSandboxPayload = z.discriminatedUnion("phase", [zSandboxStarted, zSandboxBlocked, zSandboxEnded, zSandboxMetered]);

export type SandboxPayload = z.infer<typeof zSandboxPayload>;
export type SandboxStarted = z.infer<typeof zSandboxStarted>;
export type SandboxBlocked = z.infer<typeof zSandboxBlocked>;
export type SandboxEnded = z.infer<typeof zSandboxEnded>;
export type SandboxMetered = z.infer<typeof zSandboxMetered>;
