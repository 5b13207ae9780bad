import { Template } from "@huggingface/jinja";
import { describe, expect, it } from "vitest";

// patches/@huggingface+jinja+0.5.11.patch: chat templates are written for Python's Jinja (transformers renders them; so
// does llama.cpp's own Jinja, which follows it), while node-llama-cpp renders them with @huggingface/jinja, which differed
// where real templates meet real requests (found by replaying Claude Code's and Codex's first requests to the 70 templates
// llama.cpp ships). The expected values are what Python's Jinja 3.1 renders.
const render = (source: string, data: Record<string, unknown> = {}) => new Template(source).render(data);

describe("@huggingface/jinja as patched: Python's Jinja where real templates need it", () => {
    it("`properties.items()` iterates a dict with an `items` key; `d['items']` is the item (gpt-oss's template, Codex's tools)", () => {
        const template = "{% for k, v in d.items() %}{{ k }}={{ v['type'] if v is mapping else v }};{% endfor %}|{{ d['items']['type'] }}|{{ d.get('keys') }}";
        expect(render(template, {d: {items: {type: "array"}, keys: "k"}})).toBe("items=array;keys=k;|array|k");
    });

    it("an undefined value through string filters is '' (Gemma 4's `value['type'] | upper` on a property without a type)", () => {
        expect(render("[{{ x.type | upper }}][{{ x.type | lower }}][{{ x.type | trim }}][{{ x.type | string }}][{{ x.type | length }}]", {x: {}})).toBe("[][][][][0]");
    });

    it("`|string` of a dict or a list is Python's repr (Apriel's `tool|string`)", () => {
        expect(render("{{ x | string }}", {x: {a: 1, b: "it's", c: [true, null], d: 'say "hi"'}})).toBe(`{'a': 1, 'b': "it's", 'c': [True, None], 'd': 'say "hi"'}`);
    });

    it("`|string` of a boolean is str()'s `True` / `False` (LFM2.5's `arg_value | string` in a past call)", () => {
        expect(render("{{ t | string }}/{{ f | string }}", {t: true, f: false})).toBe("True/False");
    });

    it("`~` writes each side as str() does (GigaChat's `' // default: ' ~ d` with a null default)", () => {
        expect(render("{{ 'a' ~ d ~ '|' ~ t ~ '|' ~ u ~ '|' ~ 2 }}", {d: null, t: true})).toBe("aNone|True||2");
    });

    it("tuples unpack in for loops; min and max of a list; `in` with an undefined left side (functionary, MiniCPM5, Kimi-K3)", () => {
        expect(render('{% for a, b in [("k", "K"), ("j", "J")] %}{{ a }}{{ b }}{% endfor %}')).toBe("kKjJ");
        expect(render("{{ [3, 1, 2] | min }}{{ [3, 1, 2] | max }}")).toBe("13");
        expect(render("{{ 'in' if y in [1] else 'out' }}/{{ 'yes' if y not in [1] else 'no' }}")).toBe("out/yes");
    });

    it("a dict with integer keys: looked up, iterated and sorted as integers, written as Python and JSON write it (ByteDance Seed-OSS's thinking budgets)", () => {
        const gears = "{% set d = {512: 'a', 0: 'b', 1024: 'c'} %}";
        expect(render(gears + "{% for k, v in d | dictsort %}{{ k + 1 }}{{ v }};{% endfor %}{{ d[512] }}{{ d.get(0) }}|{{ 'y' if 0 in d else 'n' }}{{ 'y' if 7 in d else 'n' }}|{{ d.keys() | list }}"))
            .toBe("1b;513a;1025c;ab|yn|[512, 0, 1024]");
        expect(render(gears + "{{ d | tojson }}|{{ d | string }}")).toBe(`{"512": "a", "0": "b", "1024": "c"}|{512: 'a', 0: 'b', 1024: 'c'}`);
    });

    it("str.format: `{}`, `{0}`, `{name}`, `{{`, each value as str() writes it (Tencent Hy3's template writes its special tokens with it)", () => {
        expect(render("{{ '<think{}>'.format(t) }}|{{ '{0}-{1}-{0}'.format(1, 'b') }}|{{ '{n}{{}}'.format(n=None) }}|{{ '{}'.format(true) }}", {t: ":opensource"}))
            .toBe("<think:opensource>|1-b-1|None{}|True");
    });

    it("append and pop change a list (Kimi-K2's `ns.ids.append(...)`), and its length follows", () => {
        expect(render("{% set ns = namespace(ids=[]) %}{% set _ = ns.ids.append(1) %}{% set _ = ns.ids.append(2) %}{{ ns.ids.length }}{{ ns.ids | length }}{{ ns.ids.pop(0) }}{{ ns.ids }}"))
            .toBe("221[2]");
    });
});
