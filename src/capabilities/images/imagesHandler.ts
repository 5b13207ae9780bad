import crypto from "node:crypto";
import type { Context, Middleware } from "koa";
import type { RequestState } from "../../core/http/RequestState.js";
import { SseWriter } from "../../core/streaming/SseWriter.js";
import { StreamStart } from "../../core/streaming/StreamStart.js";
import { streamResponse } from "../../core/streaming/streamResponse.js";
import { compileRequestValidator } from "../../core/validation/compileRequestValidator.js";
import type { RouteContext } from "../Capability.js";
import type { GeneratedImage, ImageEngine, ImageProgress, ImageResult } from "./ImageEngine.js";
import type { ImageSettings } from "./imagesManifest.js";
import { eventEnvelope, progressEvent, toImagesUsage } from "./imagesResponses.js";
import { imagesSchema, maxSeed } from "./imagesSchema.js";
import type { ImageData, ImagesRequest, ImagesResponse } from "./ImagesWire.js";
import { composeGrid } from "./output/composeGrid.js";
import { encodeImage, type RgbImage } from "./output/encodeImage.js";
import { imageMimeTypes } from "./output/imageMimeTypes.js";
import type { ImageLinkStore } from "./output/ImageLinkStore.js";
import { toImageJob, type ImagesJob } from "./toImageJob.js";

/** Where `response_format: "url"` images are served (outside /v1: the links need no API key, like OpenAI's signed links). */
export const imageFilesPath = "/files/images";

const randomSeed = () => crypto.randomInt(0, maxSeed + 1);

/**
 * POST /v1/images/generations: validate against the model's parameter set, generate in the engine,
 * encode with sharp, answer b64_json or links; with `stream`, named SSE events: progress per step,
 * partial images, then `image_generation.completed`.
 */
export function imagesHandler(context: RouteContext, links: ImageLinkStore): Middleware {
    const validate = compileRequestValidator<ImagesRequest>(imagesSchema);

    return async (ctx) => {
        const state = ctx.state as RequestState;
        const request = validate(ctx.request.body);
        const {entry, engine} = await context.engines.engineFor<ImageEngine>(request.model, "image");
        const images = toImageJob(request, entry.settings as ImageSettings, engine, randomSeed);
        const {job} = images;
        Object.assign(state.logFields, {
            model: entry.id, user: request.user ?? undefined, size: images.size, steps: job.steps,
            sampler: job.sampler, n: job.seeds.length, seed: job.seeds[0], stream: images.stream || undefined
        });
        // The engine logs a truncated prompt (longer than its text window) as a warning.
        const logUsage = (result: ImageResult) => {
            state.logFields.input_tokens = result.inputTokens;
            state.logFields.truncated = result.truncated || undefined;
        };

        if (!images.stream) {
            const result = await engine.generate(job, {signal: state.signal});
            logUsage(result);
            const created = Math.floor(Date.now() / 1000);
            const data = await Promise.all(outputsOf(result.images, images.grid).map(async ({image, seeds}): Promise<ImageData> => {
                const bytes = await encodeImage(image, {format: images.outputFormat, compression: images.outputCompression});
                const seedFields = images.grid ? {seed: seeds[0], seeds} : {seed: seeds[0]};
                if (images.responseFormat === "url") {
                    const name = links.put(bytes, images.outputFormat, imageMimeTypes[images.outputFormat]);
                    return {url: `${context.linkBase(ctx)}${imageFilesPath}/${name}`, ...seedFields};
                }
                return {b64_json: bytes.toString("base64"), ...seedFields};
            }));
            const body: ImagesResponse = {
                created, data, size: images.size, output_format: images.outputFormat, quality: images.quality,
                background: "opaque", usage: toImagesUsage(result.inputTokens, job)
            };
            ctx.body = body;
            return;
        }
        await streamImage(ctx, context, engine, images, logUsage);
    };
}

/** The images the client receives: each generated image, or the four as one grid. */
function outputsOf(generated: GeneratedImage[], grid: boolean): {image: RgbImage, seeds: number[]}[] {
    if (grid)
        return [{image: composeGrid(generated), seeds: generated.map((image) => image.seed)}];
    return generated.map((image) => ({image, seeds: [image.seed]}));
}

async function streamImage(ctx: Context, context: RouteContext, engine: ImageEngine, images: ImagesJob, onResult: (result: ImageResult) => void) {
    const state = ctx.state as RequestState;
    const {job} = images;
    const started = performance.now();
    const createdAt = () => Math.floor(Date.now() / 1000);
    const size = images.size.split("x").map(Number);
    const finalSize = {width: size[0], height: size[1]};

    // Events go out in order: each waits for the one before (preview encoding is async). They wait in the
    // writer until streamResponse opens it, at the first step (a refusal or a failure before it is a JSON error).
    const writer = new SseWriter(ctx, {pingMs: context.ssePingMs});
    let chain: Promise<void> = Promise.resolve();
    const inOrder = (task: () => void | Promise<void>) => {
        chain = chain.then(task);
        chain.catch(() => {});
    };
    const sendPreview = (preview: RgbImage, partialIndex: number) => inOrder(async () => {
        const bytes = await encodeImage(preview, {format: images.outputFormat, compression: images.outputCompression, resizeTo: finalSize});
        writer.send({
            type: "image_generation.partial_image", b64_json: bytes.toString("base64"), ...eventEnvelope(images, createdAt()),
            partial_image_index: partialIndex
        }, "image_generation.partial_image");
    });
    // A grid's partial image waits for the four previews of the same index.
    const gridPreviews = new Map<number, RgbImage[]>();
    const onProgress = (progress: ImageProgress) => {
        if (progress.type === "step") {
            start.reached();
            inOrder(() => writer.send(progressEvent(progress.step, progress.steps, performance.now() - started, createdAt()), "image_generation.progress"));
            return;
        }
        if (!images.grid) {
            sendPreview(progress, progress.partialIndex);
            return;
        }
        const tiles = gridPreviews.get(progress.partialIndex) ?? new Array<RgbImage>(4);
        tiles[progress.image] = progress;
        gridPreviews.set(progress.partialIndex, tiles);
        if (tiles.filter((tile) => tile != null).length === 4) {
            gridPreviews.delete(progress.partialIndex);
            sendPreview(composeGrid(tiles), progress.partialIndex);
        }
    };

    const run = engine.generate(job, {signal: state.signal, onProgress});
    const start = new StreamStart(run);
    await streamResponse(ctx, writer, {started: start.started, produce: async () => {
        const result = await run;
        onResult(result);
        const [output] = outputsOf(result.images, images.grid);
        const bytes = await encodeImage(output.image, {format: images.outputFormat, compression: images.outputCompression});
        await chain;
        writer.send({
            type: "image_generation.completed", b64_json: bytes.toString("base64"), ...eventEnvelope(images, createdAt()),
            usage: toImagesUsage(result.inputTokens, job),
            ...(images.grid ? {seed: output.seeds[0], seeds: output.seeds} : {seed: output.seeds[0]})
        }, "image_generation.completed");
    }});
}


