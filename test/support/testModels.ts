import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Where generated test models live (git-ignored). */
export const testModelsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../.models");

/** Tiny random-weight llama with a ChatML template (written by globalSetup). */
export const tinyChatModelPath = path.join(testModelsDir, "tiny-chatml.gguf");
/** The same architecture without any chat template (written by globalSetup). */
export const tinyPlainModelPath = path.join(testModelsDir, "tiny-plain.gguf");

/** The same architecture with the Qwen2.5 tool-calling template and `<tool_call>` pieces in the vocabulary (written by globalSetup). */
export const tinyToolsModelPath = path.join(testModelsDir, "tiny-tools.gguf");

/** The real stories260K model (real weights, MIT), committed as the demo model under models/demo. */
export const storiesModelPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../models/demo/stories260K.gguf");

/** A vocabulary-only GGUF (GPT-2 byte-level BPE), committed under test/fixtures/vocab. */
export const gpt2VocabPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../fixtures/vocab/ggml-vocab-gpt-2.gguf");

export const storiesGreedyText =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.";


/** Tiny random-weight BERT-like ONNX embeddings model folder (written by globalSetup). */
export const tinyBertPath = path.join(testModelsDir, "tiny-bert");
/** The same encoder as a cross-encoder (BertForSequenceClassification, one relevance logit; written by globalSetup). */
export const tinyCrossEncoderPath = path.join(testModelsDir, "tiny-cross-encoder");
/** Tiny random-weight BERT reranker GGUF (rank pooling, a classification head; written by globalSetup). */
export const tinyRerankerGgufPath = path.join(testModelsDir, "tiny-bert-reranker.gguf");

/** Tiny random-weight Stable Diffusion folders (diffusers/optimum ONNX layout, written by globalSetup): */
/** fp32, timestep int64 [batch], input_ids int32, only vocab.json + merges.txt (like most real exports). */
export const tinySdPath = path.join(testModelsDir, "tiny-sd");
/** The same weights with a float32 timestep [1] and a tokenizer.json. */
export const tinySdFloatTimestepPath = path.join(testModelsDir, "tiny-sd-float-timestep");
/** fp16 weights and float inputs/outputs (timestep float16 [1], input_ids int64), no unet/vae configs (sizes read from the fixed 8x8 UNet session). */
export const tinySdFp16Path = path.join(testModelsDir, "tiny-sd-fp16");
/** An LCM-style export: rank-0 float timestep (current optimum-onnx) and a `timestep_cond` [batch, 16] guidance embedding input. */
export const tinySdLcmPath = path.join(testModelsDir, "tiny-sd-lcm");

/** Tiny random-weight Kokoro-shaped (StyleTTS2) ONNX speech model folder with voices af_heart, af_alloy, am_echo, bm_fable (written by globalSetup). */
export const tinyKokoroPath = path.join(testModelsDir, "tiny-kokoro");

/** Tiny random-weight VITS/MMS-shaped ONNX speech model folder, 16 kHz, one speaker (written by globalSetup). */
export const tinyVitsPath = path.join(testModelsDir, "tiny-vits");

/** Tiny random-weight SmolVLM-shaped ONNX vision-language model folder (vision encoder, token embeddings, merged decoder, processor; written by globalSetup). */
export const tinySmolVlmPath = path.join(testModelsDir, "tiny-smolvlm");
/** The same that never ends its answer, with a context of a million positions (a generation only a cancel stops). */
export const tinySmolVlmEndlessPath = path.join(testModelsDir, "tiny-smolvlm-endless");
/** Tiny random-weight Whisper-shaped ONNX transcription model folder (encoder + merged decoder, en/de/fr/es; written by globalSetup). */
export const tinyWhisperPath = path.join(testModelsDir, "tiny-whisper");
/** The same shape without languages or the translate task, like the whisper-*.en models. */
export const tinyWhisperEnglishPath = path.join(testModelsDir, "tiny-whisper-en");
/** Variants for Whisper's checks and word times (written by globalSetup; makeTestWhisperOnnx says what each option does). */
export const tinyWhisperVariantPaths = {
    /** 64 tokens per window: its greedy text loops ("axuaxu..."), too repetitive for Whisper's check, so windows fall back to sampling. */
    looping: path.join(testModelsDir, "tiny-whisper-looping"),
    /** `<|nospeech|>` likely and text unlikely: every window is silence. */
    silent: path.join(testModelsDir, "tiny-whisper-silent"),
    /** A space likely after each letter: several words per segment. */
    wordy: path.join(testModelsDir, "tiny-whisper-wordy")
};
