/**
 * `npm start`'s command with the test-only gate capability; SIGUSR2 opens the gate (see gateCapability.ts).
 * With GATED_FAKE_ENGINES=1, the chat, speech, images and transcription models are gated fakes instead
 * (gatedFakeEngines.ts: their streams wait for the gate after their first piece).
 */
import type { Capability } from "../../src/capabilities/Capability.js";
import { loadCapabilities } from "../../src/capabilities/capabilities.js";
import { runServerCommand } from "../../src/runServerCommand.js";
import { gateCapability, openGate } from "./capabilities/gateCapability.js";
import { withGatedFakeEngine } from "./gatedFakeEngines.js";

const loaded = await loadCapabilities();
const capabilities = process.env.GATED_FAKE_ENGINES === "1" ? loaded.map(withGatedFakeEngine) : loaded;

process.on("SIGUSR2", openGate);
await runServerCommand({capabilities: [...capabilities, gateCapability as Capability]});
