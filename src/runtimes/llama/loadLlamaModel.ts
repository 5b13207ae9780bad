import fs from "node:fs";
import { GgufInsights, readGgufFileInfo, type Llama, type LlamaModel, type LlamaModelOptions } from "node-llama-cpp";

/**
 * `llama.loadModel`, whose failure says so when the file is cut short (an unfinished download or copy, the usual
 * reason a GGUF that reads fine does not load): node-llama-cpp says only "Failed to load model", llama.cpp's own reason
 * goes to stderr. The file's header says where its tensors end (node-llama-cpp's GgufInsights, as the memory estimate
 * reads it); a file shorter than that is named with both sizes. Other failures are as node-llama-cpp reports them.
 */
export async function loadLlamaModel(llama: Llama, options: LlamaModelOptions): Promise<LlamaModel> {
    try {
        return await llama.loadModel(options);
    } catch (error) {
        const shortBy = await truncation(llama, options.modelPath).catch(() => null);
        if (shortBy == null)
            throw error;
        throw new Error(`${error instanceof Error ? error.message : String(error)}: the file is cut short, ${shortBy}`, {cause: error});
    }
}

/** How a single-file GGUF is shorter than its tensors need ("N bytes where its tensors end at M: ..."), or null. */
async function truncation(llama: Llama, file: string): Promise<string | null> {
    const info = await readGgufFileInfo(file, {logWarnings: false});
    if (info.infoEndOffset == null || info.splicedParts > 1)
        return null;
    const end = info.infoEndOffset + (await GgufInsights.from(info, llama)).modelSize;
    const size = fs.statSync(file).size;
    return size < end ? `${size} bytes where its tensors end at ${end} (an unfinished download or copy?)` : null;
}
