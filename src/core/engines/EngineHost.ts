import type { Logger } from "../../logger.js";
import type { ModelEntry } from "../../registry/ModelEntry.js";
import type { ModelRegistry } from "../../registry/ModelRegistry.js";
import type { ChatEngine } from "../../capabilities/chat/ChatEngine.js";
import type { EmbeddingsEngine } from "../../capabilities/embeddings/EmbeddingsEngine.js";

export type ChatEngineFactory = (entry: ModelEntry) => Promise<ChatEngine>;
export type EmbeddingsEngineFactory = (entry: ModelEntry) => Promise<EmbeddingsEngine>;

export type EngineFactories = {
    chat: ChatEngineFactory;
    /** Without it, embeddings models are skipped like other unserved tasks. */
    embeddings?: EmbeddingsEngineFactory;
};

export type HostState = "loading" | "ready" | "failed" | "disposed";

/**
 * Owns the loaded engines. The factories are injected so tests can run the HTTP layer against
 * fake engines, and so later tasks (embeddings, speech, image) plug in beside chat.
 */
export class EngineHost {
    private readonly chatEngines = new Map<string, ChatEngine>();
    private readonly embeddingsEngines = new Map<string, EmbeddingsEngine>();
    private stateValue: HostState = "loading";

    constructor(private readonly registry: ModelRegistry, private readonly factories: EngineFactories, private readonly logger: Logger) {}

    get state() {
        return this.stateValue;
    }

    /** Loads every servable model; models of tasks this version does not serve are skipped with a warning. */
    async loadAll(): Promise<void> {
        try {
            for (const entry of this.registry.entries) {
                if (!this.serves(entry)) {
                    this.logger.warn(`Model '${entry.id}' has task '${entry.task}', which this version does not serve yet; skipping it.`);
                    continue;
                }
                const started = performance.now();
                if (entry.task === "embeddings") {
                    const engine = await this.factories.embeddings!(entry);
                    if (this.stateValue === "disposed") {
                        await engine.dispose();
                        return;
                    }
                    this.embeddingsEngines.set(entry.id, engine);
                    this.logger.info(`Loaded '${entry.id}'`, {ms: Math.round(performance.now() - started), dimensions: engine.info.dimensions, maxInputTokens: engine.info.maxInputTokens});
                    continue;
                }
                const engine = await this.factories.chat(entry);
                if (this.stateValue === "disposed") {
                    await engine.dispose();
                    return;
                }
                this.chatEngines.set(entry.id, engine);
                this.logger.info(`Loaded '${entry.id}'`, {ms: Math.round(performance.now() - started), context: engine.info.contextSize});
            }
            this.stateValue = "ready";
        } catch (error) {
            this.stateValue = "failed";
            throw error;
        }
    }

    /** Per loaded model: how busy it is (reported by /health). */
    loads() {
        return Object.fromEntries([...this.chatEngines, ...this.embeddingsEngines].map(([id, engine]) => [id, engine.load()]));
    }

    chat(id: string): ChatEngine | undefined {
        return this.chatEngines.get(id);
    }

    embeddings(id: string): EmbeddingsEngine | undefined {
        return this.embeddingsEngines.get(id);
    }

    /** Whether the entry is (or will be) served by an engine of this version. */
    serves(entry: ModelEntry) {
        return entry.task === "chat" || (entry.task === "embeddings" && this.factories.embeddings != null);
    }

    async dispose() {
        this.stateValue = "disposed";
        const engines = [...this.chatEngines.values(), ...this.embeddingsEngines.values()];
        this.chatEngines.clear();
        this.embeddingsEngines.clear();
        await Promise.allSettled(engines.map((engine) => engine.dispose()));
    }
}
