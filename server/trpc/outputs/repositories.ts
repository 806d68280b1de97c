import { z } from "zod";
import { ForgeKind, RepoRole } from "@/server/db/generated/enums";

// What the repository pickers read (server/domain/repositories/settings-presenter.ts).

export const zRepositoryRef = z.object({ id: z.string(), fullName: z.string() });

export const zPickableRepositories = z.array(zRepositoryRef.extend({ forge: z.enum(ForgeKind), role: z.enum(RepoRole) }));
