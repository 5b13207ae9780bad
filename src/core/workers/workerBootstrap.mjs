// piscina worker entry when running from TypeScript source (npm test, tsx): register the TypeScript
// loader in this worker thread (vitest's transform does not reach worker threads), then load the real
// entry. The compiled build (npm start) loads workerMain.js directly.
import { workerData } from "piscina";
import { register } from "tsx/esm/api";

register();
const worker = await import(workerData.main);

export default worker.default;
