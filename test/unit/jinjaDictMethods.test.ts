import { Template } from "@huggingface/jinja";
import { describe, expect, it } from "vitest";

// patches/@huggingface+jinja+0.5.11.patch: chat templates are Python Jinja, where `dict.items` written with a dot is the
// dict's method even where the dict holds an item of that name, and `dict['items']` the item. @huggingface/jinja (which
// node-llama-cpp renders templates with) looked the item up first, so gpt-oss's template (`properties.items()`) failed
// on a tool with a property called `items` (Codex sends one): every Codex request to a gpt-oss model was a 500.
describe("@huggingface/jinja as patched: a dict's methods before its items of the same name", () => {
    it("`properties.items()` iterates a dict with an `items` key; `d['items']` is the item", () => {
        const template = new Template("{% for k, v in d.items() %}{{ k }}={{ v['type'] if v is mapping else v }};{% endfor %}|{{ d['items']['type'] }}|{{ d.get('keys') }}");
        expect(template.render({d: {items: {type: "array"}, keys: "k"}})).toBe("items=array;keys=k;|array|k");
    });
});
