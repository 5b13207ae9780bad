import type { CapabilityManifest } from "../CapabilityManifest.js";
import { rerankManifest, type RerankSettings } from "./rerankManifest.js";

/** The rerank task (/v1/rerank on GGUF rerankers and ONNX cross-encoders): what the manifest loader and the downloader know of it. */
export const rerankManifestPart = {
    task: "rerank" as const,
    endpoints: ["/v1/rerank"],
    manifest: rerankManifest,
    recognise: {
        // Cross-encoders: an encoder with a sequence-classification head (their model_type, bert or xlm-roberta, is an embedding model's).
        architectures: ["BertForSequenceClassification", "XLMRobertaForSequenceClassification", "RobertaForSequenceClassification",
            "ElectraForSequenceClassification", "DistilBertForSequenceClassification", "ModernBertForSequenceClassification"],
        // llama.cpp's LLAMA_POOLING_TYPE_RANK: a GGUF reranker (bge-reranker, jina-reranker, converted by convert_hf_to_gguf.py).
        ggufPoolingTypes: [4],
        pipelineTags: ["text-ranking"]
    }
} satisfies CapabilityManifest<RerankSettings>;
