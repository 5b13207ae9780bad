import { AutoModelForImageTextToText, AutoProcessor, RawImage, type PreTrainedModel, type Processor, type Tensor } from "@huggingface/transformers";
import type { TaskContext } from "../../../../core/workers/WorkerTask.js";
import { seededSampler } from "../../../../runtimes/onnx/seededSampler.js";
import { transformersInternals } from "../../../../runtimes/onnx/transformersInternals.js";
import type { VisionGenerateResult, VisionGenerateTask, VisionModelDescription, VisionModelSpec, VisionProgress, VisionPromptTask } from "./visionWorkerProtocol.js";

type ModelConfig = {text_config?: {max_position_embeddings?: number, vocab_size?: number}, vocab_size?: number};

/**
 * A vision-language model in a worker (transformers.js: AutoProcessor and AutoModelForImageTextToText, which load the
 * folder's vision encoder, token embeddings and merged decoder): the prompt through the model's own chat template with
 * the images where the turns put them, the processor's image tokens and pixel values, and transformers.js's generate()
 * with a seeded sampler, the text sent as it comes and the request's cancel flag checked between tokens.
 */
export class VisionModel {
    private constructor(private readonly processor: Processor, private readonly model: PreTrainedModel, readonly description: VisionModelDescription,
        private readonly endTokens: ReadonlySet<number>) {}

    static async load(spec: VisionModelSpec): Promise<VisionModel> {
        const processor = await AutoProcessor.from_pretrained(spec.path, {local_files_only: true});
        const model = await AutoModelForImageTextToText.from_pretrained(spec.path, {local_files_only: true, device: "cpu", dtype: spec.dtype as "fp32"});
        const config = transformersInternals.modelConfig(model) as ModelConfig;
        const ends = transformersInternals.eosTokenIds(model);
        return new VisionModel(processor, model, {
            contextSize: config.text_config?.max_position_embeddings ?? 2048,
            vocabularySize: config.text_config?.vocab_size ?? config.vocab_size ?? 0
        }, new Set(ends));
    }

    /** The processor's inputs for the turns: the rendered template, each image's tokens, the pixel values. */
    private async inputs(task: VisionPromptTask): Promise<Record<string, Tensor>> {
        const prompt = this.processor.apply_chat_template(task.turns as never, {add_generation_prompt: true, tokenize: false}) as string;
        if (task.images.length === 0)
            return this.processor.tokenizer!(prompt) as Record<string, Tensor>;
        const images = task.images.map(({rgb, width, height}) => new RawImage(new Uint8ClampedArray(rgb.buffer, rgb.byteOffset, rgb.byteLength), width, height, 3));
        return await this.processor(prompt, images) as Record<string, Tensor>;
    }

    async promptTokens(task: VisionPromptTask): Promise<number> {
        return (await this.inputs(task)).input_ids.dims[1];
    }

    async generate(task: VisionGenerateTask, context: TaskContext<VisionProgress>): Promise<VisionGenerateResult> {
        const inputs = await this.inputs(task);
        const promptTokens = inputs.input_ids.dims[1];
        const tokenizer = this.processor.tokenizer!;
        const generated: number[] = [];
        let sent = "";
        let prompt = true;
        const streamer = {
            put: (value: bigint[][]) => {
                // The first call is the prompt; later ones are one chosen token each.
                if (prompt) {
                    prompt = false;
                    return;
                }
                generated.push(Number(value[0][0]));
                const text = tokenizer.decode(generated, {skip_special_tokens: true});
                // A token that ends inside a character waits for the rest of it.
                if (text.length > sent.length && !text.endsWith("\uFFFD")) {
                    context.progress({text: text.slice(sent.length)});
                    sent = text;
                }
            },
            end: () => {}
        };
        await this.model.generate({
            ...inputs,
            max_new_tokens: task.maxTokens,
            do_sample: false,
            logits_processor: task.temperature > 0 ? [seededSampler(task.temperature, task.seed)] : [],
            stopping_criteria: [(ids: bigint[][]) => ids.map(() => context.cancelled)],
            streamer
        } as never);
        context.throwIfCancelled();
        const ended = generated.length > 0 && this.endTokens.has(generated.at(-1)!);
        const text = tokenizer.decode(ended ? generated.slice(0, -1) : generated, {skip_special_tokens: true});
        if (text.length > sent.length)
            context.progress({text: text.slice(sent.length)});
        return {promptTokens, completionTokens: ended ? generated.length - 1 : generated.length, finishReason: ended ? "stop" : "length", text};
    }

    dispose(): Promise<unknown> {
        return this.model.dispose();
    }
}
