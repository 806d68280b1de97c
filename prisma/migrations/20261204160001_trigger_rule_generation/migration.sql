-- The trigger rules' generation: one counter that every change to "TriggerRule" (insert, update,
-- delete, truncate, a repository's cascade) bumps in the changing transaction, so it becomes
-- visible exactly when the change commits. Workers cache each repository's live rules under the
-- generation they read and reload when it moved (evaluation/rule-cache.ts).
CREATE TABLE "TriggerRuleGeneration" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "generation" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "TriggerRuleGeneration_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "TriggerRuleGeneration_one_row" CHECK ("id" = 1)
);

INSERT INTO "TriggerRuleGeneration" ("id", "generation") VALUES (1, 0);

CREATE FUNCTION "airlock_bump_trigger_rule_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "TriggerRuleGeneration" SET "generation" = "generation" + 1 WHERE "id" = 1;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "TriggerRule_generation"
  AFTER INSERT OR UPDATE OR DELETE ON "TriggerRule"
  FOR EACH STATEMENT EXECUTE FUNCTION "airlock_bump_trigger_rule_generation"();

CREATE TRIGGER "TriggerRule_generation_truncate"
  AFTER TRUNCATE ON "TriggerRule"
  FOR EACH STATEMENT EXECUTE FUNCTION "airlock_bump_trigger_rule_generation"();
