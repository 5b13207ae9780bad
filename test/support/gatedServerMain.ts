/** `npm start`'s command with the test-only gate capability; SIGUSR2 opens the gate (see gateCapability.ts). */
import type { Capability } from "../../src/capabilities/Capability.js";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import { runServerCommand } from "../../src/runServerCommand.js";
import { gateCapability, openGate } from "./capabilities/gateCapability.js";

const capabilities = await loadCapabilities();

process.on("SIGUSR2", openGate);
await runServerCommand({capabilities: [...capabilities, gateCapability as Capability]});
