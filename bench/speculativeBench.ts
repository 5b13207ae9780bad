/**
 * `npm run bench:speculative [-- --runs N] [--models stories,copier,random,draft] [--tokens N] [--skip-peer]`
 *
 * Speculative decoding through the server, side by side in one interleaved run: our server with speculation
 * off and on (prompt lookup, or a draft model), and llama.cpp's llama-server built from the same llama.cpp
 * source (bench/peer/buildLlamaServer.ts), with its default (no speculation) and with its own lookups
 * (`ngram-simple` at its default and matching 3 tokens, `ngram-mod`, `ngram-map-k`) or its draft model (`-md`, drafts
 * of at most 8, 16 and 32 tokens); each request is compared with llama-server's fastest of them. Same GGUF, threads 1, a
 * sequence per request shape (so each shape's prompt stays cached), one stream at a time, greedy, streamed
 * /v1/completions (raw prompts), the end-of-sequence token banned so every run generates `--tokens` tokens; tokens/s over
 * each whole request.
 *
 * Request shapes: a code edit (the file comes back with a change), a summary quoting its source, a JSON
 * extraction, a RAG answer quoting a passage, and a free story (the worst case: nothing to copy). The quoted
 * text is the model's own greedy continuation of a seed (asked of our server, speculation off, first): a
 * capable model copies what it quotes, and these small models copy only what they would write anyway, so the
 * quoted passage is made of that. On the generated models it is steered into a real copy (steeredPassage: no cycle
 * shorter than 64 tokens, by banning the tokens that closed one; the bans go with every request quoting it, on both
 * servers, and those prompts are sent as token ids), and each answer is checked to be its passage.
 * Models (what acceptance means on each):
 * - stories: stories260K, real text (TinyStories). It copies what it is shown weakly: the honest figure for
 *   a tiny real model, and the cost of rejected drafts on a model whose step is ~1 ms.
 * - copier: a generated 56 MB F16 llama whose attention adds nothing, so its next token depends on the current
 *   token only and it repeats any passage of its own output it is shown: acceptance as a strong model copying
 *   a file (the upper bound of prompt lookup), at a realistic cost per step.
 * - random: bench:peer's generated 56 MB F16 llama: random text with nothing to copy, the worst case.
 * - draft: a generated 8-layer 123 MB target whose layers 3-8 add little (gain 0.002) and a 2-layer copy of it
 *   (same seed, 31 MB) as the draft model: a draft that agrees with its target most of the time.
 */
import fs from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { readGgufFileInfo } from "node-llama-cpp";
import { makeTestLlamaGguf, type TestLlamaGgufOptions } from "../test/support/gguf/makeTestLlamaGguf.js";
import { processCpuMs } from "./cpuAccounting.js";
import { buildLlamaServer } from "./peer/buildLlamaServer.js";
import { LlamaServerProcess } from "./peer/LlamaServerProcess.js";
import { cacheDir, peerModelPath, projectRoot } from "./peer/peerModels.js";
import { readSseEvents } from "./readSseEvents.js";
import { BenchServer } from "./serverClient.js";
import { fixed, median } from "./stats.js";

const threads = 1;
/** Per sequence. */
const contextSize = 4096;
/**
 * A sequence (llama-server: a slot) per request shape, on both servers: each shape's prompt stays in its own, so the
 * interleaved requests time generation, not the prompt evaluated again after another shape's request took the only one.
 */
const sequences = 5;

const {values: args} = parseArgs({options: {
    runs: {type: "string", default: "3"},
    models: {type: "string", default: "stories,copier,random,draft"},
    tokens: {type: "string", default: "192"},
    "skip-peer": {type: "boolean", default: false}
}});
const runs = Number(args.runs);
const tokens = Number(args.tokens);

const wide = {nEmbd: 768, nHeads: 12, nKvHeads: 4, nFf: 2304, contextLength: contextSize, weightStorage: "f16", chatTemplate: null} as const;
const generated: Record<string, TestLlamaGgufOptions> = {
    copier: {...wide, nLayers: 4, seed: 41, name: "spec-copier", residualGain: (_layer, part) => part === "attention" ? 0 : 1},
    layered: {...wide, nLayers: 8, seed: 43, name: "spec-layered", residualGain: (layer) => layer >= 2 ? 0.002 : 1},
    truncated: {...wide, nLayers: 2, seed: 43, name: "spec-truncated"}
};

async function modelFile(name: string): Promise<string> {
    if (name === "stories")
        return path.join(projectRoot, "models", "demo", "stories260K.gguf");
    if (name === "random")
        return peerModelPath("56mb");
    const dir = path.join(cacheDir, "speculative-models");
    fs.mkdirSync(dir, {recursive: true});
    const file = path.join(dir, `${name}.gguf`);
    if (!fs.existsSync(file))
        await makeTestLlamaGguf(file, generated[name]);
    return file;
}

type Side = {name: string, url: string, ours: BenchServer | null, pid: number};
type Timing = {tokensPerSecond: number, cpuMsPerToken: number, completionTokens: number, text: string, draftN: number | null, draftAccepted: number | null,
    /** The generated tokens' texts (`logprobs.tokens`), when asked for. */
    tokenTexts: string[]};

/**
 * One streamed completion; speed = its tokens over the whole request's time, to its last token (not from the first
 * token: a server that verifies a draft in the same step as the prompt's last token sends its first token later and
 * the next ones at once, and timing from the first token would credit it with that step's work); CPU = the server
 * process's CPU time (all its threads, /proc, 10 ms ticks) over the whole request, per generated token: steadier than
 * tokens/s on a loaded machine (one request runs at a time, so it is this request's).
 */
async function complete(side: Side, prompt: string | number[], maxTokens: number, bans: Bans = {}, withTokens = false): Promise<Timing> {
    const cpuBefore = processCpuMs(side.pid);
    const sent = performance.now();
    const response = await fetch(`${side.url}/v1/completions`, {
        method: "POST", signal: AbortSignal.timeout(300_000), headers: {"Content-Type": "application/json"},
        body: JSON.stringify({
            model: "bench", prompt, max_tokens: maxTokens, temperature: 0, stream: true, stream_options: {include_usage: true},
            logit_bias: {"2": -100, ...bans},
            ...(withTokens ? {logprobs: 0} : {})
        })
    });
    if (response.status !== 200 || response.body == null)
        throw new Error(`${side.name}: ${response.status} ${await response.text()}`);
    let end = NaN, text = "", completionTokens = -1;
    let draftN: number | null = null, draftAccepted: number | null = null;
    const tokenTexts: string[] = [];
    for await (const {data, receivedAt} of readSseEvents(response.body)) {
        if (data === "[DONE]")
            break;
        const piece = data.choices?.[0]?.text;
        if (typeof piece === "string" && piece !== "") {
            text += piece;
            end = receivedAt;
        }
        tokenTexts.push(...data.choices?.[0]?.logprobs?.tokens ?? []);
        if (data.usage?.completion_tokens != null)
            completionTokens = data.usage.completion_tokens;
        if (typeof data.timings?.draft_n === "number") {
            draftN = data.timings.draft_n;
            draftAccepted = data.timings.draft_n_accepted;
        }
    }
    const cpuMsPerToken = (processCpuMs(side.pid) - cpuBefore) / completionTokens;
    return {tokensPerSecond: completionTokens / ((end - sent) / 1000), cpuMsPerToken, completionTokens, text, draftN, draftAccepted, tokenTexts};
}

/** Tokens banned in every request of a group (`logit_bias` -100), so that the quoted passages are real copies. */
type Bans = Record<string, number>;

/** The model's tokens for `text` (our /v1/tokenize, no special tokens added). */
async function tokenize(side: Side, text: string): Promise<number[]> {
    const response = await fetch(`${side.url}/v1/tokenize`, {method: "POST", headers: {"Content-Type": "application/json"},
        body: JSON.stringify({model: "bench", content: text, add_special_tokens: false})});
    if (response.status !== 200)
        throw new Error(`${side.name}: /v1/tokenize ${response.status} ${await response.text()}`);
    return (await response.json() as {tokens: number[]}).tokens;
}

/** Token ids by their text (a SentencePiece piece with `▁` as a space), from the model file's vocabulary. */
async function vocabularyIds(modelPath: string): Promise<Map<string, number>> {
    const info = await readGgufFileInfo(modelPath);
    const pieces = (info.metadata as any).tokenizer.ggml.tokens as string[];
    const ids = new Map<string, number>();
    pieces.forEach((piece, id) => ids.set(piece.replaceAll("\u2581", " "), ids.has(piece.replaceAll("\u2581", " ")) ? -1 : id));
    return ids;
}

/** The ids of the byte-fallback tokens (token type 6): their texts do not tell which they are, so passages have none. */
async function byteTokenIds(modelPath: string): Promise<number[]> {
    const types = ((await readGgufFileInfo(modelPath)).metadata as any).tokenizer.ggml.token_type as number[];
    return [...types.keys()].filter((id) => types[id] === 6);
}

/** The shortest cycle a quoted passage may have: longer than a draft and the longest match (llama-server's 12 tokens) together. */
const minCycle = 64;
/** A cycle shows as this many tokens occurring again (the copier's single token starts one; a model with attention repeats single tokens in any text). */
const cycleNgram = 4;

/** Whether the `cycleNgram` tokens ending at `index` occurred within the `minCycle` tokens before. */
function repeatsWithin(tokens: readonly number[], index: number): boolean {
    if (index + 1 < cycleNgram)
        return false;
    const ngram = tokens.slice(index + 1 - cycleNgram, index + 1).join(",");
    for (let end = index - 1; end >= Math.max(cycleNgram - 1, index - minCycle + 1); end--)
        if (tokens.slice(end + 1 - cycleNgram, end + 1).join(",") === ngram)
            return true;
    return false;
}

/** A passage's text and its token ids, as generated. */
type Passage = {text: string, tokens: number[], bans: Bans, banned: number};

/**
 * A passage the model really copies: its greedy continuation of `seed` with no `cycleNgram` tokens twice within
 * `minCycle` tokens (the seed's included), so the copy has no short cycle: whatever occurrence of its last tokens a lookup matches, what
 * followed there is what comes next, and a long match exists. A generated model's greedy text otherwise ends in
 * short loops (the copier's next token depends on the current token only, so a repeated token starts a cycle), where a
 * lookup that matches its most recent occurrence (llama-server's ngram-simple) never drafts, and the "copy" is only the
 * model's own loop. The first token of each such repeat is banned (`logit_bias` -100, in every request quoting the passage,
 * on both servers; byte tokens from the start), and the passage is generated again, until `length` tokens have none. Its token ids are the generated
 * ones (from their texts through the vocabulary: the text need not tokenize back to them), so prompts quoting it are
 * sent as token ids (promptTokens). Written to the cache with the model file's size and time, so later runs reuse it.
 */
async function steeredPassage(side: Side, modelPath: string, seed: string, length: number): Promise<Passage> {
    const stat = fs.statSync(modelPath);
    const file = path.join(cacheDir, "speculative-bench", `steer-${path.basename(modelPath, ".gguf")}-${Buffer.from(seed).toString("hex").slice(0, 40)}-${length}-${cycleNgram}-${minCycle}.json`);
    const key = `${stat.size}:${stat.mtimeMs}`;
    if (fs.existsSync(file)) {
        const saved = JSON.parse(fs.readFileSync(file, "utf8"));
        if (saved.key === key)
            return saved.passage;
    }
    const ids = await vocabularyIds(modelPath);
    const seedTokens = await tokenize(side, seed);
    const bans: Bans = Object.fromEntries((await byteTokenIds(modelPath)).map((id) => [String(id), -100]));
    const initialBans = Object.keys(bans).length;
    let wanted = Math.min(length, 32);
    for (let attempt = 0; attempt < 2000; attempt++) {
        if (attempt % 25 === 24)
            console.log(`  steering '${seed}': attempt ${attempt + 1}, ${wanted} tokens, ${Object.keys(bans).length - initialBans} tokens banned`);
        const {text, completionTokens, tokenTexts} = await complete(side, seed, wanted, bans, true);
        const tokens = tokenTexts.map((piece) => ids.get(piece) ?? -1);
        if (tokens.length !== completionTokens || tokens.some((id) => id < 0))
            throw new Error(`The passage of '${seed}' has tokens whose id its text does not tell: ${JSON.stringify(tokenTexts.slice(0, 40))}`);
        const all = [...seedTokens, ...tokens];
        // The first token of the repeated tokens is banned: the way into the cycle, not its last step (banning that
        // only moves the cycle's end, round the same tokens).
        const end = all.findIndex((_token, index) => index >= seedTokens.length && repeatsWithin(all, index));
        if (end >= 0) {
            bans[all[Math.max(seedTokens.length, end + 1 - cycleNgram)]] = -100;
            continue;
        }
        if (wanted === length) {
            const passage = {text, tokens, bans, banned: Object.keys(bans).length - initialBans};
            fs.writeFileSync(file, JSON.stringify({key, passage}));
            return passage;
        }
        wanted = Math.min(length, wanted * 2);
    }
    throw new Error(`No passage of ${length} tokens without a cycle shorter than ${minCycle} for '${seed}' after 2,000 attempts`);
}

/** A shape's prompt as token ids: its own text tokenized piece by piece, the seed's and the passage's tokens as they are. */
async function promptTokens(side: Side, shape: Shape, passage: Passage): Promise<number[]> {
    const seedMark = "\u0001seed\u0001", passageMark = "\u0001passage\u0001";
    const seedTokens = await tokenize(side, shape.seed);
    const tokens: number[] = [];
    for (const part of shape.prompt(seedMark, passageMark).split(/(\u0001(?:seed|passage)\u0001)/))
        tokens.push(...part === seedMark ? seedTokens : part === passageMark ? passage.tokens : part === "" ? [] : await tokenize(side, part));
    return tokens;
}

/** The request shapes: a prompt quoting `source` (the model's own continuation of `seed`), ending where the quote starts again. */
type Shape = {name: string, copies: boolean, seed: string, prompt: (seed: string, source: string) => string};
const shapes: Shape[] = [
    {name: "code edit", copies: true, seed: "Once upon a time",
        prompt: (seed, source) => `Here is the file story.txt:\n\n\`\`\`\n${seed}${source}\n\`\`\`\n\nFix the typo in the second line and return the whole file:\n\n\`\`\`\n${seed}`},
    {name: "summary quoting its source", copies: true, seed: "Tom had a little dog",
        prompt: (seed, source) => `${seed}${source}\n\nSummarize the story above, quoting its opening in full.\n\nSummary: The story opens: "${seed}`},
    {name: "JSON extraction", copies: true, seed: "Lily and her mom went",
        prompt: (seed, source) => `Text: ${seed}${source}\n\nExtract the first paragraph as JSON.\n\n{"paragraph": "${seed}`},
    {name: "RAG answer", copies: true, seed: "The sun was shining and",
        prompt: (seed, source) => `Context:\n[1] A cat sat on the mat all day.\n[2] ${seed}${source}\n[3] The end.\n\nQuestion: What does [2] say?\nAnswer: [2] says: "${seed}`},
    {name: "free story (worst case)", copies: false, seed: "Once upon a time",
        prompt: (seed) => seed}
];

/** `steer`: the quoted passages are steered into real copies (steeredPassage): the generated models, whose own text loops. */
type Group = {model: string, draft: string | null, steer: boolean, ours: [string, string[]][], peer: [string, string[]][]};

function groups(): Group[] {
    // llama-server's lookups at their defaults, and ngram-simple matching as short as ours does (3 tokens, 16-token drafts).
    const lookup: Group["peer"] = [
        ["llama-server default", []],
        ["llama-server ngram-simple", ["--spec-type", "ngram-simple"]],
        ["llama-server ngram-simple n3", ["--spec-type", "ngram-simple", "--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", "16"]],
        ["llama-server ngram-mod", ["--spec-type", "ngram-mod"]],
        ["llama-server ngram-map-k", ["--spec-type", "ngram-map-k"]]
    ];
    const ours: Group["ours"] = [["ours off", ["--speculative", "off"]], ["ours lookup", ["--speculative", "lookup"]]];
    return [
        {model: "stories", draft: null, steer: false, ours, peer: lookup},
        {model: "copier", draft: null, steer: true, ours, peer: lookup},
        {model: "random", draft: null, steer: false, ours, peer: lookup},
        {model: "layered", draft: "truncated", steer: true, ours: [["ours off", ["--speculative", "off"]], ["ours draft", ["--speculative", "draft"]]],
            peer: [["llama-server default", []], ...[8, 16, 32].map((max): [string, string[]] =>
                [`llama-server draft n-max ${max}`, ["-md", "DRAFT", "--spec-type", "draft-simple", "--spec-draft-n-max", String(max)]])]}
    ];
}

async function benchGroup(group: Group, llamaServer: string | null) {
    const modelPath = await modelFile(group.model);
    const draftPath = group.draft == null ? null : await modelFile(group.draft);
    const dir = path.join(cacheDir, "speculative-bench");
    fs.mkdirSync(dir, {recursive: true});
    // A manifest's draftModel wins over --speculative: the plain side gets a manifest without it.
    const manifestPath = path.join(dir, `${group.model}.models.json`);
    const plainManifestPath = path.join(dir, `${group.model}.plain.models.json`);
    fs.writeFileSync(manifestPath, JSON.stringify({models: [{id: "bench", task: "chat", path: modelPath, contextSize, ...(draftPath == null ? {} : {draftModel: draftPath})}]}));
    fs.writeFileSync(plainManifestPath, JSON.stringify({models: [{id: "bench", task: "chat", path: modelPath, contextSize}]}));
    const sides: Side[] = [];
    const peers: LlamaServerProcess[] = [];
    try {
        for (const [name, extraArgs] of group.ours) {
            const server = await BenchServer.start({
                cwd: projectRoot, manifestPath: extraArgs.includes("off") ? plainManifestPath : manifestPath,
                keysFile: path.join(dir, "no-keys.json"), threads, parallel: sequences, startTimeoutMs: 300_000, extraArgs
            });
            sides.push({name, url: server.baseUrl.replace(/\/v1$/, ""), ours: server, pid: server.pid});
        }
        if (llamaServer != null)
            for (const [name, extraArgs] of group.peer) {
                const peer = await LlamaServerProcess.start(llamaServer, [
                    "-m", modelPath, "-t", String(threads), "-tb", String(threads), "-np", String(sequences), "-c", String(contextSize * sequences), "-fa", "auto",
                    ...extraArgs.map((arg) => arg === "DRAFT" ? draftPath! : arg),
                    ...(extraArgs.includes("-md") ? ["-td", String(threads), "-tbd", String(threads)] : [])
                ]);
                peers.push(peer);
                sides.push({name, url: peer.baseUrl, ours: null, pid: peer.pid});
            }
        // Every side loads its model before the timed runs (ours load on demand): its CPU time is then the requests' own.
        for (const side of sides)
            await complete(side, "Once", 2);
        // The quoted passages: the model's own greedy continuations (our server, speculation off), steered into real
        // copies on the generated models (then quoted as token ids, with the bans every request quoting them carries).
        const sources = new Map<string, string>();
        const passages = new Map<string, Passage>();
        for (const shape of shapes)
            if (shape.copies && !sources.has(shape.seed)) {
                if (group.steer) {
                    const passage = await steeredPassage(sides[0], modelPath, shape.seed, tokens);
                    console.log(`${group.model}, '${shape.seed}': a passage of ${tokens} tokens without a cycle shorter than ${minCycle} tokens (${passage.banned} tokens banned, and the byte tokens)`);
                    sources.set(shape.seed, passage.text);
                    passages.set(shape.seed, passage);
                } else
                    sources.set(shape.seed, (await complete(sides[0], shape.seed, tokens)).text);
            }
        const prompts = new Map<string, string | number[]>();
        for (const shape of shapes) {
            const passage = shape.copies ? passages.get(shape.seed) : undefined;
            prompts.set(shape.name, passage != null ? await promptTokens(sides[0], shape, passage) : shape.prompt(shape.seed, sources.get(shape.seed) ?? ""));
        }
        const speedOf = new Map<string, number[]>();
        const cpuOf = new Map<string, number[]>();
        const acceptance = new Map<string, {drafted: number, accepted: number, drafts: number}>();
        const same = new Map<string, boolean>();
        const notCopied = new Set<string>();
        for (let run = 0; run < runs; run++) {
            for (const shape of shapes) {
                const prompt = prompts.get(shape.name)!;
                const order = run % 2 === 0 ? sides : [...sides].reverse();
                const texts = new Map<string, string>();
                for (const side of order) {
                    const before = side.ours == null ? null : await speculativeStats(side);
                    const timing = await complete(side, prompt, tokens, shape.copies ? passages.get(shape.seed)?.bans : undefined);
                    if (timing.completionTokens !== tokens)
                        throw new Error(`${group.model}, ${shape.name}, ${side.name}: ${timing.completionTokens} tokens instead of ${tokens}`);
                    const key = `${shape.name}|${side.name}`;
                    speedOf.set(key, [...speedOf.get(key) ?? [], timing.tokensPerSecond]);
                    cpuOf.set(key, [...cpuOf.get(key) ?? [], timing.cpuMsPerToken]);
                    texts.set(side.name, timing.text);
                    const total = acceptance.get(key) ?? {drafted: 0, accepted: 0, drafts: 0};
                    if (before != null) {
                        const after = await speculativeStats(side);
                        total.drafted += after.draftedTokens - before.draftedTokens;
                        total.accepted += after.acceptedTokens - before.acceptedTokens;
                        total.drafts += after.drafts - before.drafts;
                    } else if (timing.draftN != null) {
                        total.drafted += timing.draftN;
                        total.accepted += timing.draftAccepted ?? 0;
                    }
                    acceptance.set(key, total);
                }
                if (shape.copies && group.steer && texts.get(group.ours[0][0]) !== sources.get(shape.seed))
                    notCopied.add(shape.name);
                const ourTexts = group.ours.map(([name]) => texts.get(name));
                same.set(shape.name, (same.get(shape.name) ?? true) && ourTexts.every((text) => text === ourTexts[0]));
            }
        }
        report(group, sides, speedOf, acceptance, same, sources);
        if (group.steer)
            console.log(notCopied.size === 0 ? "Every answer quoting a passage was that passage, token for token." : `Answers that were not the passage they quote: ${[...notCopied].join(", ")}`);
        reportCpu(group, sides, speedOf, cpuOf);
    } finally {
        for (const side of sides)
            await side.ours?.stop();
        for (const peer of peers)
            await peer.stop();
    }
}

async function speculativeStats(side: Side): Promise<{drafts: number, draftedTokens: number, acceptedTokens: number}> {
    const health = await (await fetch(`${side.url}/health`)).json() as any;
    // (not listed before its first request: models load on demand)
    return health.models?.bench?.details?.speculative ?? {drafts: 0, draftedTokens: 0, acceptedTokens: 0};
}

function report(group: Group, sides: Side[], speedOf: Map<string, number[]>, acceptance: Map<string, {drafted: number, accepted: number, drafts: number}>,
    same: Map<string, boolean>, sources: Map<string, string>) {
    const [plain, fast] = group.ours.map(([name]) => name);
    const peerDefault = sides.find((side) => side.name === "llama-server default");
    const peerSpecs = sides.filter((side) => side.ours == null && side !== peerDefault);
    console.log(`\n## ${group.model}${group.draft == null ? "" : ` (draft model: ${group.draft})`}: ${runs} interleaved runs, ${tokens} tokens, medians of tokens/s`);
    console.log(`quoted passages: ${[...sources.values()].map((text) => JSON.stringify(text.slice(0, 40) + "...")).join(", ")}`);
    const peerColumns = peerDefault == null ? "" : ` ${peerDefault.name} | llama-server's best speculative setting (accepted/drafted) |`;
    const ratios = peerDefault == null ? "" : ` ${fast} / llama-server default | ${fast} / llama-server best | ${plain} / llama-server default |`;
    console.log(`\n| request | ${plain} | ${fast} (accepted/drafted, mean accepted length) | ${fast} / ${plain} |${peerColumns}${ratios} same text |`);
    console.log(`|---|---|---|---|${peerDefault == null ? "" : "---|---|---|---|---|"}---|`);
    for (const shape of shapes) {
        const speed = (side: string) => median(speedOf.get(`${shape.name}|${side}`) ?? []);
        const accepted = (side: string) => {
            const stats = acceptance.get(`${shape.name}|${side}`);
            if (stats == null || stats.drafted === 0)
                return "no drafts";
            const mean = stats.drafts > 0 ? `, ${fixed(stats.accepted / stats.drafts, 1)}` : "";
            return `${fixed(100 * stats.accepted / stats.drafted, 0)}% of ${stats.drafted}${mean}`;
        };
        let row = `| ${shape.name} | ${fixed(speed(plain), 0)} | ${fixed(speed(fast), 0)} (${accepted(fast)}) | **${fixed(speed(fast) / speed(plain), 2)}** |`;
        if (peerDefault != null) {
            const best = peerSpecs.reduce((a, b) => speed(b.name) > speed(a.name) ? b : a, peerSpecs[0]);
            row += ` ${fixed(speed(peerDefault.name), 0)} | ${fixed(speed(best.name), 0)}: ${best.name.replace("llama-server ", "")} (${accepted(best.name)}) |` +
                ` **${fixed(speed(fast) / speed(peerDefault.name), 2)}** | **${fixed(speed(fast) / speed(best.name), 2)}** | ${fixed(speed(plain) / speed(peerDefault.name), 2)} |`;
        }
        console.log(`${row} ${same.get(shape.name) ? "yes" : "NO"} |`);
    }
    if (peerSpecs.length > 1)
        console.log(`\nEvery llama-server setting (median tokens/s per request): ${peerSpecs.map((side) =>
            `${side.name.replace("llama-server ", "")} ${shapes.map((shape) => fixed(median(speedOf.get(`${shape.name}|${side.name}`) ?? []), 0)).join("/")}`).join("; ")}`);
}

/** CPU ms per generated token of every side (medians), beside its tokens/s, and ours over llama-server's best per request. */
function reportCpu(group: Group, sides: Side[], speedOf: Map<string, number[]>, cpuOf: Map<string, number[]>) {
    const value = (map: Map<string, number[]>, shape: string, side: string) => median(map.get(`${shape}|${side}`) ?? []);
    const peers = sides.filter((side) => side.ours == null);
    console.log(`\nCPU ms per generated token (the server process's CPU, all threads, over each whole request, prompt included, ` +
        `divided by its generated tokens; medians) and decode tokens/s, ${group.model}:`);
    console.log(`\n| request | ${sides.map((side) => side.name).join(" | ")} |${peers.length > 0 ? " ours / llama-server's fastest, CPU per token |" : ""}`);
    console.log(`|---|${sides.map(() => "---|").join("")}${peers.length > 0 ? "---|" : ""}`);
    const fast = group.ours.at(-1)![0];
    for (const shape of shapes) {
        const cells = sides.map((side) => `${fixed(value(cpuOf, shape.name, side.name), 2)} (${fixed(value(speedOf, shape.name, side.name), 0)}/s)`);
        let row = `| ${shape.name} | ${cells.join(" | ")} |`;
        if (peers.length > 0) {
            const best = peers.reduce((a, b) => value(speedOf, shape.name, b.name) > value(speedOf, shape.name, a.name) ? b : a, peers[0]);
            row += ` ${fixed(value(cpuOf, shape.name, fast) / value(cpuOf, shape.name, best.name), 2)} (${best.name.replace("llama-server ", "")}) |`;
        }
        console.log(row);
    }
}

const llamaServer = args["skip-peer"] ? null : buildLlamaServer(projectRoot, cacheDir);
console.log("Note: on a shared machine the absolute figures move with the load; the runs interleave so the ratios hold better.");
const wanted = new Set(args.models!.split(","));
for (const group of groups())
    if (wanted.has(group.model) || (group.model === "layered" && wanted.has("draft")))
        await benchGroup(group, llamaServer);
