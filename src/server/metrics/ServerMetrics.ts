import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { EngineHost } from "../../core/engines/EngineHost.js";
import type { MemoryDevice } from "../../core/engines/MemoryEstimate.js";
import type { BodyMemory } from "../../core/http/BodyMemory.js";

/** What the request-context middleware knows when a request ends, whatever the endpoint. */
export type FinishedRequest = {
    /** The route's pattern (`/v1/chat/completions`, `/v1/models/:id`), or `other` for unknown paths. */
    endpoint: string;
    /** The concrete model id a handler resolved (its `logFields.model`), or "" */
    model: string;
    status: number;
    seconds: number;
    /** Handlers' log fields: `prompt_tokens`, `completion_tokens`, `ttft_ms` are counted when present. */
    logFields: Record<string, unknown>;
};

/** The memory gauges' names per device: RAM's came first and keep theirs. */
const deviceMetrics: readonly {device: MemoryDevice, names: {model: string, inUse: string, budget: string, words: string}, budgetFlag: string}[] = [
    {device: "ram", budgetFlag: "--memory-budget", names: {model: "los_model_memory_bytes", inUse: "los_memory_in_use_bytes", budget: "los_memory_budget_bytes", words: "RAM budget"}},
    {device: "vram", budgetFlag: "--vram-budget; 0 without a GPU, or while its size has not been asked for yet",
        names: {model: "los_model_vram_bytes", inUse: "los_vram_in_use_bytes", budget: "los_vram_budget_bytes", words: "VRAM budget"}}
];

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** A model's load: milliseconds for a small GGUF, minutes for a large one from a slow disk. */
const loadBuckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The server's Prometheus metrics (prom-client: the standard Node client, which also brings the
 * process metrics: resident memory, heap, CPU, open file descriptors, event-loop lag).
 * Capability-independent by construction: per-request figures come from the request context
 * (route, model, status, log fields), per-model load from every engine's `load()`, so a new
 * capability is measured without a line of its own.
 */
export class ServerMetrics {
    readonly registry = new Registry();
    readonly #requests: Counter;
    readonly #duration: Histogram;
    readonly #ttft: Histogram;
    readonly #tokens: Counter;

    constructor(engines: EngineHost, bodyMemory: BodyMemory) {
        collectDefaultMetrics({register: this.registry});
        this.#requests = new Counter({name: "los_requests_total", help: "HTTP requests by endpoint, model and status", labelNames: ["endpoint", "model", "status"], registers: [this.registry]});
        this.#duration = new Histogram({name: "los_request_duration_seconds", help: "Request latency, until the response ended", labelNames: ["endpoint", "model"], buckets: latencyBuckets, registers: [this.registry]});
        this.#ttft = new Histogram({name: "los_time_to_first_token_seconds", help: "Streamed requests: time from arrival to the first generated token", labelNames: ["endpoint", "model"], buckets: latencyBuckets, registers: [this.registry]});
        this.#tokens = new Counter({name: "los_tokens_total", help: "Tokens processed: direction=prompt (in) or completion (out)", labelNames: ["endpoint", "model", "direction"], registers: [this.registry]});
        const loadGauge = (name: string, help: string, pick: (load: {parallel: number, busy: number, waiting: number}) => number) => new Gauge({
            name, help, labelNames: ["model"], registers: [this.registry],
            collect() {
                this.reset();
                for (const [model, load] of Object.entries(engines.loads()))
                    this.set({model}, pick(load));
            }
        });
        loadGauge("los_model_parallel", "Requests (chat: sequences) a model serves at once", (load) => load.parallel);
        loadGauge("los_model_busy", "Sequences or workers busy right now, per model", (load) => load.busy);
        loadGauge("los_model_queue_depth", "Requests waiting for a place, per model", (load) => load.waiting);
        // Counters a chat model keeps in its load details: its prompt cache (hit rate = rate(hits) / rate(lookups), token
        // share = rate(cached_tokens) / rate(prompt_tokens): how an operator sees whether balancer affinity works) and its
        // speculative decoding (acceptance rate = rate(accepted) / rate(drafted); docs/speculative.md).
        const detailsCounter = (section: "promptCache" | "speculative", field: string, name: string, help: string) => new Counter({
            name, help, labelNames: ["model"], registers: [this.registry],
            collect() {
                this.reset();
                for (const [model, load] of Object.entries(engines.loads())) {
                    const stats = load.details?.[section] as Record<string, unknown> | undefined;
                    if (typeof stats?.[field] === "number")
                        this.inc({model}, stats[field]);
                }
            }
        });
        detailsCounter("promptCache", "lookups", "los_prompt_cache_lookups_total", "Chat prompts looked up in the prompt cache (one per sequence a request used)");
        detailsCounter("promptCache", "hits", "los_prompt_cache_hits_total", "Of those lookups, how many reused at least one cached token");
        detailsCounter("promptCache", "promptTokens", "los_prompt_cache_prompt_tokens_total", "Prompt tokens looked up in the prompt cache");
        detailsCounter("promptCache", "cachedTokens", "los_prompt_cache_cached_tokens_total", "Prompt tokens reused from the cache instead of evaluated");
        detailsCounter("promptCache", "copiedTokens", "los_prompt_cache_copied_tokens_total",
            "Prompt tokens copied from another sequence's KV cache instead of evaluated (a request's other choices; requests sharing a prefix with another sequence)");
        detailsCounter("speculative", "draftedTokens", "los_speculative_drafted_tokens_total", "Draft tokens verified by chat models (prompt lookup or a draft model)");
        detailsCounter("speculative", "acceptedTokens", "los_speculative_accepted_tokens_total", "Of those draft tokens, how many the model accepted");
        new Gauge({
            name: "los_model_load_seconds", help: "How long each model's last load took", labelNames: ["model"], registers: [this.registry],
            collect() {
                this.reset();
                for (const [model, seconds] of engines.loadSeconds())
                    this.set({model}, seconds);
            }
        });
        // The model library: loads, evictions and the memory budget (docs/models.md "The model library").
        const loadDuration = new Histogram({
            name: "los_model_load_duration_seconds", help: "How long models' successful loads took, every load", labelNames: ["model"], buckets: loadBuckets, registers: [this.registry]
        });
        engines.onLoad((model, seconds) => loadDuration.observe({model}, seconds));
        new Counter({
            name: "los_model_loads_total", help: "Model loads, by model and result (ok, failed)", labelNames: ["model", "result"], registers: [this.registry],
            collect() {
                this.reset();
                for (const [model, counts] of engines.loadCounts) {
                    this.inc({model, result: "ok"}, counts.ok);
                    this.inc({model, result: "failed"}, counts.failed);
                }
            }
        });
        new Counter({
            name: "los_model_evictions_total", help: "Models unloaded, by model and reason (memory: room for another model; idle: keep-alive ended; admin: POST /models/unload; shutdown)",
            labelNames: ["model", "reason"], registers: [this.registry],
            collect() {
                this.reset();
                for (const [model, byReason] of engines.evictionCounts)
                    for (const [reason, count] of byReason)
                        this.inc({model, reason}, count);
            }
        });
        // Per device, what the models hold of the budget and the budget (RAM; a GPU's VRAM, 0 without one).
        for (const {device, names, budgetFlag} of deviceMetrics) {
            new Gauge({
                name: names.model, help: `Bytes of the ${names.words} each model holds (its estimate) while loading, loaded or unloading`,
                labelNames: ["model"], registers: [this.registry],
                collect() {
                    this.reset();
                    for (const [model, bytes] of engines.memoryByModel())
                        if (bytes[device] > 0)
                            this.set({model}, bytes[device]);
                }
            });
            new Gauge({
                name: names.inUse, help: `Bytes of the ${names.words} the models hold together (their estimates)`, registers: [this.registry],
                collect() {
                    this.set(engines.memoryInUse()[device]);
                }
            });
            new Gauge({
                name: names.budget, help: `The ${names.words} (${budgetFlag}): past it idle models holding it are evicted`, registers: [this.registry],
                collect() {
                    this.set(device === "ram" ? engines.memoryBudget : engines.vramBudget ?? 0);
                }
            });
        }
        new Gauge({
            name: "los_request_body_memory_bytes", help: "Bytes of request bodies (JSON and uploads) held in memory while they arrive",
            registers: [this.registry],
            collect() {
                this.set(bodyMemory.held);
            }
        });
        new Gauge({
            name: "los_request_body_memory_limit_bytes", help: "Their cap (--max-body-memory): past it new bodies get 503",
            registers: [this.registry],
            collect() {
                this.set(bodyMemory.capacity);
            }
        });
    }

    observe(request: FinishedRequest): void {
        const labels = {endpoint: request.endpoint, model: request.model};
        this.#requests.inc({...labels, status: String(request.status)});
        this.#duration.observe(labels, request.seconds);
        const {prompt_tokens: promptTokens, completion_tokens: completionTokens, ttft_ms: ttftMs} = request.logFields;
        if (typeof promptTokens === "number")
            this.#tokens.inc({...labels, direction: "prompt"}, promptTokens);
        if (typeof completionTokens === "number")
            this.#tokens.inc({...labels, direction: "completion"}, completionTokens);
        if (typeof ttftMs === "number")
            this.#ttft.observe(labels, ttftMs / 1000);
    }
}
