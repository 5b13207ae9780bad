// @ts-check
import { call, element, labelled, modelOptions } from "./api.js";

/** @typedef {{id: string, aliases: string[]}} Model */

/**
 * The embeddings tab: several texts in, one per line; their cosine similarities drawn as an n x n heatmap,
 * so a person sees which texts the model puts close together.
 * @param {HTMLElement} root
 * @param {Model[]} models
 */
export function mountEmbeddings(root, models) {
    const model = element("select", {name: "model"}, modelOptions(models));
    const texts = element("textarea", {name: "texts", rows: "6"});
    texts.value = ["A cat sleeps on the sofa.", "A kitten naps on the couch.", "The stock market fell today.", "Shares dropped sharply this morning."].join("\n");
    const compare = element("button", {type: "submit"}, ["Compare"]);
    const error = element("p", {class: "error", role: "alert"});
    const heatmap = element("div", {class: "heatmap"});
    const form = element("form", {class: "card"}, [element("div", {class: "row"}, [labelled("Model", model)]), labelled("Texts, one per line", texts), compare]);
    const note = element("p", {class: "muted"});
    root.append(form, element("div", {class: "card"}, [note, error, heatmap]));

    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        error.textContent = "";
        const inputs = texts.value.split("\n").map((line) => line.trim()).filter((line) => line !== "");
        if (inputs.length === 0)
            return;
        compare.disabled = true;
        try {
            const response = await call("/v1/embeddings", {body: {model: model.value, input: inputs}, model: model.value, onWait: (text) => note.textContent = text});
            /** @type {{data: {index: number, embedding: number[]}[]}} */
            const result = await response.json();
            const vectors = [...result.data].sort((a, b) => a.index - b.index).map((item) => item.embedding);
            draw(heatmap, inputs, vectors);
        } catch (failure) {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
        } finally {
            compare.disabled = false;
        }
    });
}

/**
 * @param {number[]} a
 * @param {number[]} b
 */
export function cosine(a, b) {
    let dot = 0;
    let na = 0;
    let nb = 0;
    for (let i = 0; i < a.length; i++) {
        dot += a[i] * b[i];
        na += a[i] * a[i];
        nb += b[i] * b[i];
    }
    return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/**
 * @param {HTMLElement} target
 * @param {string[]} labels
 * @param {number[][]} vectors
 */
function draw(target, labels, vectors) {
    const n = vectors.length;
    target.style.gridTemplateColumns = `minmax(6rem, 14rem) repeat(${n}, 3.5rem)`;
    /** @type {Node[]} */
    const cells = [element("span", {class: "label"}), ...labels.map((_, index) => element("span", {class: "label", title: labels[index]}, [String(index + 1)]))];
    for (let row = 0; row < n; row++) {
        cells.push(element("span", {class: "label", title: labels[row]}, [`${row + 1}. ${labels[row]}`]));
        for (let column = 0; column < n; column++) {
            const similarity = cosine(vectors[row], vectors[column]);
            // -1 .. 1 on a white-to-blue scale.
            const strength = Math.max(0, Math.min(1, (similarity + 1) / 2));
            const cell = element("span", {class: "cell", title: `${labels[row]} · ${labels[column]}: ${similarity.toFixed(3)}`, "data-similarity": similarity.toFixed(4)}, [similarity.toFixed(2)]);
            cell.style.background = `rgb(${Math.round(255 - 200 * strength)}, ${Math.round(255 - 140 * strength)}, 255)`;
            cells.push(cell);
        }
    }
    target.replaceChildren(...cells);
}
