-- The generation of what evaluation reads from configuration (trigger rules and repositories):
-- one counter that every change to "TriggerRule" or "Repository" (insert, update, delete,
-- truncate, a cascade) bumps in the changing transaction, so it becomes visible exactly when the
-- change commits. Workers cache rule sets and repository rows under the generation they read
-- with the delivery, and reload when it moved (evaluation/config-cache.ts).
CREATE TABLE "EvaluationConfigGeneration" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "generation" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "EvaluationConfigGeneration_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "EvaluationConfigGeneration_one_row" CHECK ("id" = 1)
);

INSERT INTO "EvaluationConfigGeneration" ("id", "generation") VALUES (1, 0);

CREATE FUNCTION "airlock_bump_evaluation_config_generation"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE "EvaluationConfigGeneration" SET "generation" = "generation" + 1 WHERE "id" = 1;
  RETURN NULL;
END;
$$;

CREATE TRIGGER "TriggerRule_config_generation"
  AFTER INSERT OR UPDATE OR DELETE ON "TriggerRule"
  FOR EACH STATEMENT EXECUTE FUNCTION "airlock_bump_evaluation_config_generation"();

CREATE TRIGGER "TriggerRule_config_generation_truncate"
  AFTER TRUNCATE ON "TriggerRule"
  FOR EACH STATEMENT EXECUTE FUNCTION "airlock_bump_evaluation_config_generation"();

CREATE TRIGGER "Repository_config_generation"
  AFTER INSERT OR UPDATE OR DELETE ON "Repository"
  FOR EACH STATEMENT EXECUTE FUNCTION "airlock_bump_evaluation_config_generation"();

CREATE TRIGGER "Repository_config_generation_truncate"
  AFTER TRUNCATE ON "Repository"
  FOR EACH STATEMENT EXECUTE FUNCTION "airlock_bump_evaluation_config_generation"();
