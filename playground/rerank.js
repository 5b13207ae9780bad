// @ts-check
import { call, element, labelled, modelOptions } from "./api.js";

/** @typedef {{id: string, aliases: string[]}} Model */

/**
 * Reranking, in the embeddings tab: a query and documents, one per line, scored by a rerank model (POST /v1/rerank);
 * the documents drawn best first, each with its relevance score as a bar.
 * @param {HTMLElement} root
 * @param {Model[]} models the rerank models
 */
export function mountRerank(root, models) {
    const model = element("select", {name: "rerank-model"}, modelOptions(models));
    const query = element("input", {name: "query", type: "text"});
    query.value = "Where do pandas live?";
    const documents = element("textarea", {name: "documents", rows: "6"});
    documents.value = ["The giant panda lives in the mountain forests of central China.", "Pandas eat bamboo almost exclusively.",
        "The stock market fell today.", "Red pandas are not closely related to giant pandas."].join("\n");
    const rank = element("button", {type: "submit"}, ["Rerank"]);
    const error = element("p", {class: "error", role: "alert"});
    const note = element("p", {class: "muted"});
    const results = element("ol", {class: "ranking"});
    const form = element("form", {class: "card"}, [element("h2", {}, ["Rerank"]), element("div", {class: "row"}, [labelled("Model", model)]),
        labelled("Query", query), labelled("Documents, one per line", documents), rank]);
    root.append(form, element("div", {class: "card"}, [note, error, results]));

    form.addEventListener("submit", async (event) => {
        event.preventDefault();
        error.textContent = "";
        const texts = documents.value.split("\n").map((line) => line.trim()).filter((line) => line !== "");
        if (texts.length === 0)
            return;
        rank.disabled = true;
        try {
            const response = await call("/v1/rerank", {body: {model: model.value, query: query.value, documents: texts}, model: model.value, onWait: (text) => note.textContent = text});
            /** @type {{results: {index: number, relevance_score: number}[]}} */
            const body = await response.json();
            results.replaceChildren(...body.results.map((result) => {
                const bar = element("span", {class: "bar"});
                bar.style.width = `${(result.relevance_score * 100).toFixed(1)}%`;
                return element("li", {"data-index": String(result.index), "data-score": result.relevance_score.toFixed(6)}, [
                    element("span", {class: "score"}, [result.relevance_score.toFixed(3)]), bar, element("span", {}, [texts[result.index]])]);
            }));
        } catch (failure) {
            error.textContent = failure instanceof Error ? failure.message : String(failure);
        } finally {
            rank.disabled = false;
        }
    });
}
