// piscina worker entry. The worker module is TypeScript: register tsx in this worker thread (a
// no-op cost when the server already runs under `tsx`; needed under vitest, whose transform does
// not reach worker threads), then load it.
import { register } from "tsx/esm/api";

register();
const worker = await import("./embeddingWorker.ts");

export default worker.default;
