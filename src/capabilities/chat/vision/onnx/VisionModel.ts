import { AutoModelForImageTextToText, AutoProcessor, RawImage, type PreTrainedModel, type Processor, type Tensor } from "@huggingface/transformers";
import type { TaskContext } from "../../../../core/workers/WorkerTask.js";
import { seededSampler } from "../../../../runtimes/onnx/seededSampler.js";
import { transformersInternals } from "../../../../runtimes/onnx/transformersInternals.js";
import { ChoiceText } from "../../shared/ChoiceText.js";
import { decisionLabels } from "../../shared/decisionLabels.js";
import type { NextToken } from "../../shared/labelProbabilities.js";
import { TokenTextDecoder } from "../../shared/TokenTextDecoder.js";
import { toTokenLogprob } from "../../shared/toTokenLogprob.js";
import { logitBiasProcessor, penaltiesProcessor, RawLogitsTap } from "./chatLogitsProcessors.js";
import { VocabularyText } from "./VocabularyText.js";
import type { TemplateImage, TemplateTurn, VisionGenerateResult, VisionGenerateTask, VisionModelDescription, VisionModelSpec, VisionProgress, VisionPromptTask, VisionTokenized, VisionTokenizeTask } from "./visionWorkerProtocol.js";

type ModelConfig = {text_config?: {max_position_embeddings?: number, vocab_size?: number}, vocab_size?: number};

/**
 * A vision-language model in a worker (transformers.js: AutoProcessor and AutoModelForImageTextToText, which load the
 * folder's vision encoder, token embeddings and merged decoder): the prompt through the model's own chat template with
 * the images where the turns put them, the processor's image tokens and pixel values, and transformers.js's generate()
 * with a seeded sampler, the text sent as it comes and the request's cancel flag checked between tokens.
 */
export class VisionModel {
    private constructor(private readonly processor: Processor, private readonly model: PreTrainedModel, readonly description: VisionModelDescription,
        private readonly endTokens: ReadonlySet<number>, private readonly vocabulary: VocabularyText) {}

    static async load(spec: VisionModelSpec): Promise<VisionModel> {
        const processor = await AutoProcessor.from_pretrained(spec.path, {local_files_only: true});
        const model = await AutoModelForImageTextToText.from_pretrained(spec.path, {local_files_only: true, device: "cpu", dtype: spec.dtype as "fp32"});
        const config = transformersInternals.modelConfig(model) as ModelConfig;
        const ends = transformersInternals.eosTokenIds(model);
        const tokenizer = processor.tokenizer!;
        const encode = (text: string) => tokenizer.encode(text, {add_special_tokens: false});
        return new VisionModel(processor, model, {
            contextSize: config.text_config?.max_position_embeddings ?? 2048,
            vocabularySize: config.text_config?.vocab_size ?? config.vocab_size ?? 0,
            decisionLabels: decisionLabels({atStart: encode, variants: (text) => [encode(" " + text)]})
        }, new Set(ends), new VocabularyText(tokenizer, spec.path));
    }

    /** The processor's inputs for the turns: the rendered template, each image's tokens, the pixel values. */
    private async inputs(task: VisionPromptTask): Promise<Record<string, Tensor>> {
        return this.encode(this.render(task.turns), task.images);
    }

    /** The turns through the model's chat template, with the generation prompt. */
    render(turns: readonly TemplateTurn[]): string {
        return this.processor.apply_chat_template(turns as never, {add_generation_prompt: true, tokenize: false}) as string;
    }

    /** A rendered prompt's inputs: its tokens (each image's included) and the images' pixel values. */
    async encode(prompt: string, images: readonly TemplateImage[]): Promise<Record<string, Tensor>> {
        if (images.length === 0)
            return this.processor.tokenizer!(prompt) as Record<string, Tensor>;
        const raw = images.map(({rgb, width, height}) => new RawImage(new Uint8ClampedArray(rgb.buffer, rgb.byteOffset, rgb.byteLength), width, height, 3));
        return await this.processor(prompt, raw) as Record<string, Tensor>;
    }

    /**
     * The model's next-token distribution after `inputs` (its raw logits' softmax); with `then`, the one after that
     * token too (generated with it forced), as a function of the token.
     */
    async nextToken(inputs: Record<string, Tensor>, then?: number): Promise<NextToken<number>> {
        const tap = new RawLogitsTap();
        let step = 0;
        const read = (ids: bigint[][], logits: Tensor) => {
            if (then == null || step++ > 0)
                return tap.processor(ids, logits);
            const scores = logits.data as Float32Array;
            scores.fill(-Infinity);
            scores[then] = 0;
            return logits;
        };
        await this.model.generate({...inputs, max_new_tokens: then == null ? 1 : 2, do_sample: false, logits_processor: [read]} as never);
        return (token) => tap.probability(token);
    }

    async promptTokens(task: VisionPromptTask): Promise<number> {
        return (await this.inputs(task)).input_ids.dims[1];
    }

    /**
     * One choice: transformers.js's generate() with the job's logits processors (RawLogitsTap first when logprobs are
     * asked for, then the logit bias, the penalties and the seeded draw: chatLogitsProcessors), its tokens through
     * ChoiceText (the text as it becomes final, the stop sequences cut, each logprobs entry with its text), the request's
     * cancel flag and a stop sequence checked after every token.
     */
    async generate(task: VisionGenerateTask, context: TaskContext<VisionProgress>): Promise<VisionGenerateResult> {
        const inputs = await this.inputs(task);
        const promptTokens = inputs.input_ids.dims[1];
        const {sampling, logprobs} = task;
        const tap = logprobs == null ? null : new RawLogitsTap();
        const output = new ChoiceText(new TokenTextDecoder(this.vocabulary.detokenize, []), task.stop,
            (text, entries) => context.progress(entries == null ? {text} : {text, logprobs: entries}));
        let generated = 0;
        let ended = false;
        let prompt = true;
        const streamer = {
            put: (value: bigint[][]) => {
                // The first call is the prompt; later ones are one chosen token each.
                if (prompt) {
                    prompt = false;
                    return;
                }
                const token = Number(value[0][0]);
                if (this.endTokens.has(token)) {
                    ended = true;
                    return;
                }
                generated++;
                if (tap == null)
                    output.push(token);
                else {
                    const entry = toTokenLogprob(token, tap.distribution(token, logprobs!), logprobs!, this.vocabulary.bytes);
                    output.push(token, () => entry);
                }
            },
            end: () => {}
        };
        const penalized = sampling.frequencyPenalty !== 0 || sampling.presencePenalty !== 0;
        await this.model.generate({
            ...inputs,
            max_new_tokens: task.maxTokens,
            do_sample: false,
            logits_processor: [
                ...(tap == null ? [] : [tap.processor]),
                ...(sampling.logitBias.length === 0 ? [] : [logitBiasProcessor(sampling.logitBias)]),
                ...(penalized ? [penaltiesProcessor(promptTokens, sampling.frequencyPenalty, sampling.presencePenalty)] : []),
                ...(sampling.temperature > 0 ? [seededSampler(sampling.temperature, sampling.seed, {topK: sampling.topK, topP: sampling.topP})] : [])
            ],
            stopping_criteria: [(ids: bigint[][]) => ids.map(() => context.cancelled || output.stopped)],
            streamer
        } as never);
        context.throwIfCancelled();
        output.finish();
        return {
            promptTokens, text: output.text,
            completionTokens: output.stopped ? output.tokenCount : generated,
            finishReason: ended || output.stopped ? "stop" : "length",
            ...(output.stopSequence == null ? {} : {stopSequence: output.stopSequence}),
            ...(logprobs == null ? {} : {logprobs: output.logprobs})
        };
    }

    /** The tokens of a text (the tokenizer's special tokens added when asked), or of a prompt as `generate` evaluates it (its images' tokens included). */
    async tokenize(task: VisionTokenizeTask): Promise<VisionTokenized> {
        const tokens = task.kind === "text"
            ? this.processor.tokenizer!.encode(task.text, {add_special_tokens: task.addSpecial})
            : [...(await this.inputs(task.prompt)).input_ids.data as BigInt64Array].map(Number);
        return task.withPieces ? {tokens, pieces: tokens.map((token) => this.vocabulary.piece(token))} : {tokens};
    }

    /** The text of token ids, special tokens written as their text. */
    detokenize(tokens: readonly number[]): string {
        return this.vocabulary.text(tokens);
    }

    dispose(): Promise<unknown> {
        return this.model.dispose();
    }
}
