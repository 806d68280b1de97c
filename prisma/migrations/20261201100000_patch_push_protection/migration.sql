-- Push protection for patches (issue 14, item 3). A patch in which redaction found a secret is
-- stored redacted in "content" (what every screen shows) with what was found in
-- "secretFindings" (rule, count: never a value); its original bytes, the ones its digest names
-- and the only ones that could be pushed, are kept apart in "withheldContent" (bytea, read by the
-- write-back executor alone) until an admin overrides the refusal with a recorded reason.
ALTER TABLE "Artifact" ADD COLUMN "secretFindings" JSONB,
ADD COLUMN "withheldContent" BYTEA;

ALTER TABLE "ApprovalRequest" ADD COLUMN "pushProtectionOverride" JSONB;
