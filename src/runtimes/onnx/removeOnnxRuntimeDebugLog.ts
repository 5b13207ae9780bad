import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * onnxruntime-node 1.30's Linux library embeds Microsoft's telemetry SDK, which creates an empty
 * `mat-debug-<pid>.log` in the temporary folder when the process creates its first ONNX Runtime
 * session (no setting turns it off). The server removes its own when it stops, so a start and a stop
 * leave nothing in /tmp.
 */
export function removeOnnxRuntimeDebugLog(pid = process.pid): void {
    fs.rmSync(path.join(os.tmpdir(), `mat-debug-${pid}.log`), {force: true});
}
