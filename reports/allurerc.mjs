// Allure 3 configuration of model-props' HTML report (read by `model-props report` and `pytest --claims-html`).
// The reports folder comes from MODEL_PROPS_REPORTS (the reports/ under the directory pytest ran from), else
// the folder of this file: Allure resolves relative paths against the working directory, not this file.
import { dirname } from "node:path";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const reports = process.env.MODEL_PROPS_REPORTS ?? dirname(fileURLToPath(import.meta.url));

export default {
  name: "model-props: published findings as tests",
  output: join(reports, "allure-report"),
  historyPath: join(reports, "allure-history.jsonl"), // one line per run: the History tab of every test
  historyLimit: 50,
  hideLabels: ["host", "thread"],
  // The seed study's expectations get their own categories instead of plain "skipped" (xfail) entries.
  categories: [
    { id: "known-failure", name: "Known failures (not reproduced at this scale)", matchers: { statuses: ["failed", "broken", "skipped"], labels: { tag: "^known-failure$" } }, groupByMessage: false, expand: true },
    { id: "inconclusive", name: "Inconclusive at this scale (expected)", matchers: { labels: { tag: "^inconclusive$" } }, groupByMessage: false, expand: true },
    { id: "xpass", name: "Unexpected passes", matchers: { message: "^XPASS" }, groupByMessage: false },
    { id: "not-applicable", name: "Not applicable to the model (skipped)", matchers: { statuses: ["skipped"] } },
  ],
  plugins: {
    awesome: {
      options: {
        singleFile: true,
        reportName: "model-props: claim verdicts",
        reportLanguage: "en",
        theme: "light",
        groupBy: ["epic", "feature", "story"], // paper -> section -> claim
      },
    },
  },
};
