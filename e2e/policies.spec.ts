import { expect, signIn, test } from "./fixtures";

test.describe("policies: rules with proofs", () => {
  test("an admin edits CI triage, sees a conflict live, tries facts and saves version 2 with a diff", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_admin");
    await page.goto("/policies");
    await expect(page.getByRole("heading", { name: "Policies", level: 1 })).toBeVisible();
    const row = page.getByTestId("policies-table").getByRole("row").filter({ hasText: "ci_triage" });
    await expect(row).toContainText("v1");
    await expect(row).toContainText("no conflicts, gaps or vacuous rules");
    await row.getByRole("link", { name: "CI failure triage" }).click();

    await expect(page).toHaveURL(/\/policies\/ci_triage$/);
    await expect(page.getByRole("heading", { name: "CI failure triage", level: 1 })).toBeVisible();
    const conflicts = page.getByRole("region", { name: "Conflicts" });
    await expect(conflicts).toContainText("No conflicts");

    // Make the deploy rule fire on test failures: it now overlaps the flaky-rerun rule.
    const deployRule = page.getByTestId("rule-0");
    await expect(deployRule).toContainText("deploy_failure_rolls_back");
    const stageValue = deployRule.getByRole("group", { name: "Condition on failing_stage" }).getByLabel("Value");
    await stageValue.selectOption("test");
    const conflict = conflicts.getByTestId("conflict").filter({ hasText: "flaky_test_gets_one_rerun" });
    await expect(conflict).toContainText("deploy_failure_rolls_back → roll_back and flaky_test_gets_one_rerun → rerun_once");
    await expect(conflict.getByTestId("example-facts")).toContainText("failing_stage = test");
    await expect(conflict.getByTestId("example-facts")).toContainText("known_flaky = true");
    await expect(conflict).toContainText("Priority picks deploy_failure_rolls_back");
    await expect(deployRule).toContainText("conflicts with");

    // Put it back: the conflict goes away, live.
    await stageValue.selectOption("deploy");
    await expect(conflicts).toContainText("No conflicts");

    // A model violation (two rules with one name) blocks saving, with the reason shown.
    const rerunName = page.getByTestId("rule-1").getByLabel("Name");
    await rerunName.fill("deploy_failure_rolls_back");
    await expect(page.getByRole("region", { name: "Model violations" })).toContainText("the name is used by an earlier rule");
    await expect(page.getByTestId("save-blocked-reason")).toContainText("violate the model");
    await expect(page.getByRole("button", { name: "Save as v2" })).toBeDisabled();
    await rerunName.fill("flaky_test_gets_one_rerun");
    await expect(page.getByRole("region", { name: "Model violations" })).toContainText("The rules fit the model.");

    // Try it against the rules in the form, with facts from different sources.
    const tryIt = page.getByRole("region", { name: "Try it" });
    const stage = tryIt.getByRole("group", { name: "Fact failing_stage" });
    await stage.getByLabel("Value").selectOption("test");
    const flaky = tryIt.getByRole("group", { name: "Fact known_flaky" });
    await flaky.getByLabel("Set known_flaky").check();
    await flaky.getByLabel("Value").selectOption("true");
    await flaky.getByLabel("Source").selectOption({ label: "asserted by a person" });
    const reruns = tryIt.getByRole("group", { name: "Fact prior_reruns" });
    await reruns.getByLabel("Set prior_reruns").check();
    await reruns.getByLabel("Value").fill("0");
    await reruns.getByLabel("Source").selectOption({ label: "asserted by the API" });
    await tryIt.getByRole("button", { name: "Evaluate" }).click();

    const proof = tryIt.getByTestId("proof-tree");
    await expect(proof).toContainText("disposition = rerun_once");
    await expect(proof).toContainText("via flaky_test_gets_one_rerun");
    await expect(proof.locator('[data-proof-leaf="failing_stage"]')).toContainText("asserted by a webhook");
    await expect(proof.locator('[data-proof-leaf="known_flaky"]')).toContainText("asserted by a person");
    await expect(proof.locator('[data-proof-leaf="prior_reruns"]')).toContainText("asserted by the API");
    await expect(proof.locator('[data-proof-leaf="reproduces_on_rerun"]')).toContainText("absent: closed world");

    // A real edit, then the dirty guard: leaving asks first, and staying keeps the edit.
    const explanation = "A failed deploy rolls back at once; the investigation comes after.";
    await deployRule.getByLabel("Explanation").fill(explanation);
    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("main").getByRole("link", { name: "Policies" }).click();
    await expect(page).toHaveURL(/\/policies\/ci_triage$/);
    await expect(deployRule.getByLabel("Explanation")).toHaveValue(explanation);

    const saveButton = page.getByRole("button", { name: "Save as v2" });
    await expect(saveButton).toBeEnabled();
    await saveButton.click();
    await expect(page.getByText("Saved CI failure triage as version 2")).toBeVisible();
    await expect(page.getByTestId("current-version")).toHaveText("v2");

    const history = page.getByRole("region", { name: "Version history" });
    await expect(history.getByTestId("version-2")).toContainText("admin@airlock.local");
    const diff = history.getByTestId("policy-diff");
    await expect(diff).toContainText("deploy_failure_rolls_back");
    await expect(diff).toContainText(explanation);
    await expect(diff).toContainText("A failed deploy is rolled back first; the investigation comes after.");
    await expect(page.getByRole("button", { name: "Save as v3" })).toBeDisabled();
    await expect(page.getByTestId("save-blocked-reason")).toHaveText("No changes to save.");
  });

  test("a viewer sees a policy read-only and can still try it", async ({ page, baseURL }) => {
    await signIn(page, baseURL!, "user_viewer");
    await page.goto("/policies/change_gate");
    await expect(page.getByRole("heading", { name: "Change gate", level: 1 })).toBeVisible();
    await expect(page.getByRole("note")).toContainText("only an Airlock admin can change policies");
    await expect(page.getByRole("button", { name: /^Save/ })).toHaveCount(0);
    await expect(page.getByTestId("rule-0").getByLabel("Property").first()).toBeDisabled();

    const tryIt = page.getByRole("region", { name: "Try it" });
    await tryIt.getByRole("group", { name: "Fact kind" }).getByLabel("Set kind").check();
    await tryIt.getByRole("group", { name: "Fact kind" }).getByLabel("Value").selectOption("publish_release");
    await tryIt.getByRole("button", { name: "Evaluate" }).click();
    await expect(tryIt.getByTestId("proof-tree")).toContainText("approval_required = true");
    await expect(tryIt.getByTestId("proof-tree")).toContainText("via release_publish_needs_a_person");
  });
});
