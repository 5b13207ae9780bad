import fs from "node:fs";
import path from "node:path";
import { projectRoot } from "./projectRoot.js";

/** The server's version, from package.json (part of `system_fingerprint`). */
export const serverVersion: string = JSON.parse(fs.readFileSync(path.join(projectRoot, "package.json"), "utf8")).version;
