import { createRequire } from "node:module";

/** The server's version, from package.json (part of `system_fingerprint`). */
export const serverVersion: string = createRequire(import.meta.url)("../package.json").version;
