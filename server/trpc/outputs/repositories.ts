import { z } from "zod";
import { ForgeKind, RepoRole } from "@/server/db/generated/enums";

// What the repository pickers and the members section read (server/domain/repositories/).

export const zRepositoryRef = z.object({ id: z.string(), fullName: z.string() });

export const zPickableRepositories = z.array(zRepositoryRef.extend({ forge: z.enum(ForgeKind), role: z.enum(RepoRole) }));

export const zMembership = z.object({ id: z.string(), repositoryId: z.string(), userId: z.string(), role: z.enum(RepoRole), createdAt: z.date() });
export const zRemovedMember = z.object({ userId: z.string() });
