import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { makeTestLlamaGguf, type TestLlamaGgufOptions } from "../../test/support/gguf/makeTestLlamaGguf.js";

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
/** Git-ignored: the llama-server build and the generated models. */
export const cacheDir = path.join(projectRoot, ".cache");
export const peerContextSize = 4096;

/** The random-weight llama models the peer benches run on (written once into .cache/peer-models). */
export const peerModels: Record<string, TestLlamaGgufOptions> = {
    // ~56 MB F16: 4 layers, 768 wide.
    "56mb": {nEmbd: 768, nLayers: 4, nHeads: 12, nKvHeads: 4, nFf: 2304, contextLength: peerContextSize, seed: 11, weightStorage: "f16", name: "peer-56mb"},
    // ~300 MB F16: 12 layers, 1024 wide.
    "300mb": {nEmbd: 1024, nLayers: 12, nHeads: 16, nKvHeads: 8, nFf: 2816, contextLength: peerContextSize, seed: 12, weightStorage: "f16", name: "peer-300mb"}
};

/** The model's file, written first if missing. */
export async function peerModelPath(name: string): Promise<string> {
    const options = peerModels[name];
    if (options == null)
        throw new Error(`Unknown model '${name}'; known: ${Object.keys(peerModels).join(", ")}`);
    const modelDir = path.join(cacheDir, "peer-models");
    fs.mkdirSync(modelDir, {recursive: true});
    const modelPath = path.join(modelDir, `${name}.gguf`);
    if (!fs.existsSync(modelPath))
        await makeTestLlamaGguf(modelPath, options);
    return modelPath;
}
