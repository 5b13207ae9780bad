import type { CapabilityManifest } from "../CapabilityManifest.js";
import { embeddingsManifest, type EmbeddingSettings } from "./embeddingsManifest.js";

/** The embeddings task (/v1/embeddings on ONNX and GGUF embedding models): what the manifest loader and the downloader know of it. */
export const embeddingsManifestPart = {
    task: "embeddings" as const,
    endpoints: ["/v1/embeddings"],
    manifest: embeddingsManifest,
    recognise: {
        // Encoders transformers.js runs as feature extraction (a *ForSequenceClassification of these types is a cross-encoder: unservedModels.ts).
        modelTypes: ["bert", "roberta", "xlm-roberta", "distilbert", "mpnet", "nomic_bert", "modernbert", "e5", "electra", "deberta-v2"],
        // GGUF: pooled models (mean, cls, last; 4 = rank is a reranker) and the embedding architectures (no causal head).
        ggufPoolingTypes: [1, 2, 3],
        ggufArchitectures: ["bert", "nomic-bert", "nomic-bert-moe", "jina-bert-v2", "jina-bert-v3", "t5encoder", "modern-bert", "neo-bert", "eurobert"],
        pipelineTags: ["feature-extraction", "sentence-similarity"]
    }
} satisfies CapabilityManifest<EmbeddingSettings>;
