import { createHash } from "node:crypto";
import fs from "node:fs";
import { pipeline } from "node:stream/promises";

/** sha256 (lower-case hex) of a file, streamed: model files are gigabytes. */
export async function hashFile(file: string): Promise<string> {
    const hash = createHash("sha256");
    await pipeline(fs.createReadStream(file), hash);
    return hash.digest("hex");
}
