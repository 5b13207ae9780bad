import { DownloadError } from "./DownloadError.js";
import type { HubSpec, HubTreeFile } from "./hubRepoEntry.js";

/** The ONNX networks of a transformers.js image-text-to-text export (SmolVLM / Idefics3): what its session config loads. */
const networks = ["vision_encoder", "embed_tokens", "decoder_model_merged"];

/** What AutoProcessor, the tokenizer and generate() read beside the networks (the chat template's files as the repository has them). */
const companion = /^(config|generation_config|preprocessor_config|processor_config|tokenizer|tokenizer_config|special_tokens_map|chat_template)\.json$|^chat_template\.jinja$/;

/**
 * The files of a vision-language model's repository (a transformers.js image-text-to-text export: onnx/vision_encoder,
 * onnx/embed_tokens and onnx/decoder_model_merged, each of several dtypes), or null for another kind of repository:
 * the three networks in fp32, the dtype the vision engine loads (`OnnxVisionChatEngine`), with their external data
 * (`<file>_data`, `<file>_data_1`, ...), and the processor's, tokenizer's and generation's files. Another `--dtype` is
 * refused rather than fetched for nothing. Pure.
 */
export function visionRepoFiles(spec: HubSpec, files: readonly HubTreeFile[]): HubTreeFile[] | null {
    const onnx = files.filter((entry) => entry.path.startsWith("onnx/") && entry.path.endsWith(".onnx"));
    if (!networks.every((name) => onnx.some((entry) => entry.path.startsWith(`onnx/${name}`))))
        return null;
    if (spec.dtype != null && spec.dtype !== "fp32")
        throw new DownloadError("usage", `${spec.repo} is a vision-language model; the vision engine loads its fp32 files only: leave out --dtype or give fp32.`);
    const chosen = networks.map((name) => files.find((entry) => entry.path === `onnx/${name}.onnx`));
    if (chosen.some((entry) => entry == null))
        throw new DownloadError("notFound", `${spec.repo} lacks the fp32 networks the vision engine loads (${networks.map((name) => `onnx/${name}.onnx`).join(", ")}); ` +
            `it has: ${onnx.map((entry) => entry.path).join(", ")}.`);
    const data = files.filter((entry) => chosen.some((file) => entry.path.startsWith(`${file!.path}_data`) && /_data(_\d+)?$/.test(entry.path)));
    return [...files.filter((entry) => companion.test(entry.path)), ...chosen as HubTreeFile[], ...data];
}
