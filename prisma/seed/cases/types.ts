import type { FileChange } from "../diff";

// What an agent session says and does for one seeded failure. The transcript
// builder turns a case into events (diagnose: read, reproduce, diagnose;
// repair: also edit, verify, review, patch), cut short where a run stopped.

export type Command = { command: string; description: string; output: string; ms: number; isError?: boolean };

export type AgentCase = {
  /** The first assistant message: what the agent is about to do. */
  opening: string;
  reproduce: Command;
  read: { path: string; firstLine: number; text: string };
  grep?: { pattern: string; path: string; output: string };
  /** The diagnoser subagent's summary: the root cause in a sentence or two. */
  rootCause: string;
  /** The diagnosis artifact (Markdown). */
  diagnosis: string;
  closingDiagnose: string;
  fix?: {
    changes: FileChange[];
    verify: Command;
    review: string;
    commitMessage: string;
    closingRepair: string;
  };
  /** A repair the agent could not make deterministic: it hands over to a person. */
  giveUp?: { tries: Command; message: string; reason: string };
  /** The PR comment a diagnosis write-back posts. */
  comment?: string;
};
