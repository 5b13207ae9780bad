import { offlineTransformers } from "./offlineTransformers.js";

/**
 * The models one task module has loaded in this worker thread, by key: each loaded once (requests
 * arriving during the load share it) and kept until `release`; a failed load is forgotten, so the
 * next task tries again. Creating one sets transformers.js offline (`offlineTransformers`): task
 * modules load models only from the manifest's folders.
 */
export class WorkerModelCache<Spec extends {key: string}, Model> {
    private readonly models = new Map<string, Promise<Model>>();

    /**
     * `load` loads a model, `free` frees what it holds (its ONNX Runtime sessions); `keyOf` is the
     * cache key of a spec (default its `key`).
     */
    constructor(private readonly load: (spec: Spec) => Promise<Model>, private readonly free: (model: Model) => Promise<unknown>,
        private readonly keyOf: (spec: Spec) => string = (spec) => spec.key) {
        offlineTransformers();
    }

    /** The model of `spec`, loading it on first use. */
    get(spec: Spec): Promise<Model> {
        const key = this.keyOf(spec);
        let model = this.models.get(key);
        if (model == null) {
            model = this.load(spec);
            this.models.set(key, model);
            const loading = model;
            loading.catch(() => {
                if (this.models.get(key) === loading)
                    this.models.delete(key);
            });
        }
        return model;
    }

    /** Forgets the model of `spec` and frees it (its engine was disposed); nothing when it is not loaded or its load failed. */
    async release(spec: Spec): Promise<void> {
        const key = this.keyOf(spec);
        const model = this.models.get(key);
        this.models.delete(key);
        const loaded = await model?.catch(() => null);
        if (loaded != null)
            await this.free(loaded);
    }

    /** How many models this worker holds. */
    get size(): number {
        return this.models.size;
    }
}
