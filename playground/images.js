// @ts-check
import { call, element, labelled, modelOptions, streamMessages } from "./api.js";

/** @typedef {{id: string, aliases: string[], parameter_set?: string}} Model */

/**
 * The images tab: prompt and the Stable-Diffusion-style fields (a MidJourney-style model, by the `parameter_set`
 * /v1/models gives, shows the prompt alone), streamed so the progress bar follows `image_generation.progress` and each
 * partial image replaces the last, then the final image; a gallery of this session's results with their
 * parameters, seed and a download link.
 * @param {HTMLElement} root
 * @param {Model[]} models
 */
export function mountImages(root, models) {
    const model = element("select", {name: "model"}, modelOptions(models));
    const prompt = element("textarea", {name: "prompt", placeholder: "A lighthouse at dawn, oil painting", rows: "2"});
    const negative = element("textarea", {name: "negative_prompt", placeholder: "Negative prompt (optional)", rows: "1"});
    const size = element("input", {name: "size", placeholder: "model default, e.g. 512x512", size: "14"});
    const steps = element("input", {name: "steps", type: "number", min: "1", max: "50", placeholder: "default"});
    const guidance = element("input", {name: "guidance_scale", type: "number", min: "0", max: "30", step: "0.5", placeholder: "default"});
    const seed = element("input", {name: "seed", type: "number", min: "0", placeholder: "random"});
    const sampler = element("input", {name: "sampler", placeholder: "default", size: "10"});
    const partials = element("input", {name: "partial_images", type: "number", min: "0", max: "3", value: "2"});
    const generate = element("button", {type: "submit"}, ["Generate"]);
    const stop = element("button", {type: "button", class: "secondary", disabled: ""}, ["Stop"]);
    const progress = element("progress", {max: "1", value: "0"});
    const progressText = element("div", {class: "muted"});
    const preview = element("img", {class: "preview", alt: "", hidden: ""});
    const error = element("p", {class: "error", role: "alert"});
    const gallery = element("div", {class: "gallery"});
    const form = element("form", {class: "card"}, [
        element("div", {class: "row"}, [labelled("Model", model), labelled("Size", size), labelled("Steps", steps), labelled("Guidance", guidance),
            labelled("Seed", seed), labelled("Sampler", sampler), labelled("Partial images", partials)]),
        prompt, negative, element("div", {class: "row"}, [generate, stop])
    ]);
    root.append(form, element("div", {class: "card"}, [progress, progressText, error, preview]), gallery);
    // A MidJourney-style model takes the prompt alone: its form shows only that.
    const stableDiffusionOnly = [negative, size, steps, guidance, seed, sampler].map((field) => field.closest("label") ?? field);
    const showFields = () => {
        const midjourney = models.find((m) => m.id === model.value)?.parameter_set === "midjourney";
        for (const field of stableDiffusionOnly)
            field.hidden = midjourney;
    };
    model.addEventListener("change", showFields);
    showFields();

    /** @type {AbortController | null} */
    let running = null;
    stop.addEventListener("click", () => running?.abort());
    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        if (running != null || prompt.value.trim() === "")
            return;
        error.textContent = "";
        progress.value = 0;
        progressText.textContent = "starting";
        preview.hidden = true;
        running = new AbortController();
        generate.disabled = true;
        stop.disabled = false;
        /** @type {Record<string, unknown>} */
        const body = {model: model.value, prompt: prompt.value, stream: true, partial_images: Number(partials.value || 0), output_format: "png"};
        if (negative.value.trim() !== "" && !negative.hidden)
            body.negative_prompt = negative.value;
        if (size.value.trim() !== "" && size.closest("label")?.hidden !== true)
            body.size = size.value.trim();
        for (const [name, field] of /** @type {[string, HTMLInputElement][]} */ ([["steps", steps], ["guidance_scale", guidance], ["seed", seed]]))
            if (field.value !== "" && field.closest("label")?.hidden !== true)
                body[name] = Number(field.value);
        if (sampler.value.trim() !== "" && sampler.closest("label")?.hidden !== true)
            body.sampler = sampler.value.trim();
        try {
            const response = await call("/v1/images/generations", {
                body, signal: running.signal, onBusy: (seconds) => progressText.textContent = `busy, retrying in ${seconds} s`,
                model: model.value, onWait: (note) => progressText.textContent = note || "starting"
            });
            let partialCount = 0;
            for await (const {kind, message} of streamMessages(response)) {
                if (kind === "image_generation.progress") {
                    progress.value = message.progress;
                    progressText.textContent = `step ${message.step} of ${message.steps} · about ${Math.round(message.estimated_remaining_ms / 100) / 10} s left`;
                } else if (kind === "image_generation.partial_image") {
                    partialCount++;
                    preview.src = `data:image/${message.output_format ?? "png"};base64,${message.b64_json}`;
                    preview.hidden = false;
                    preview.dataset.partials = String(partialCount);
                } else if (kind === "image_generation.completed") {
                    progress.value = 1;
                    const source = `data:image/${message.output_format ?? "png"};base64,${message.b64_json}`;
                    preview.src = source;
                    preview.hidden = false;
                    preview.dataset.final = "true";
                    progressText.textContent = `done · seed ${message.seed} · ${message.size ?? ""}`;
                    addToGallery(gallery, source, {...body, seed: message.seed, size: message.size});
                }
            }
        } catch (failure) {
            if (!running.signal.aborted)
                error.textContent = failure instanceof Error ? failure.message : String(failure);
            else
                progressText.textContent = "stopped";
        } finally {
            running = null;
            generate.disabled = false;
            stop.disabled = true;
        }
    });
}

/**
 * @param {HTMLElement} gallery
 * @param {string} source
 * @param {Record<string, unknown>} parameters
 */
function addToGallery(gallery, source, parameters) {
    const {stream: _stream, partial_images: _partials, output_format: _format, ...shown} = parameters;
    const download = element("a", {href: source, download: `image-${parameters.seed ?? "x"}.png`}, ["Download"]);
    const figure = element("figure", {}, [
        element("img", {src: source, alt: String(parameters.prompt)}),
        element("figcaption", {}, [Object.entries(shown).map(([key, value]) => `${key}: ${value}`).join(" · "), " ", download])
    ]);
    gallery.prepend(figure);
}
