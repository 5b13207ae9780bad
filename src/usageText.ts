import { allSettings } from "./config.js";
import { helpLine, helpLines } from "./settings/describeSettings.js";

/** `npm start -- --help`: every flag and environment variable the server reads, written from src/config.ts's table. */
export const usageText = `Usage: npm start -- [options] [paths]        (or: node dist/src/main.js [options] [paths])

Serves the models of a manifest (--models, or one .json file given as the only path), or the
model files and folders given as paths (a.gguf folder/), over an OpenAI-compatible HTTP API.
A flag wins over its environment variable, which wins over the default.

Options (flag / environment variable, default):
${[
    ...helpLines(allSettings.filter((setting) => setting.flag != null)),
    helpLine("-h, --help", "", "", "this text"),
    ...helpLines(allSettings.filter((setting) => setting.flag == null))
].join("\n")}

API keys: npm run keys -- --help. Models: npm run download-models -- --help.
`;
