import path from "node:path";
import { projectRoot } from "./projectRoot.js";

/** The model served when none is configured: stories260K, committed with its licence in models/demo/. */
export const demoModelPath = path.join(projectRoot, "models", "demo", "stories260K.gguf");
