/** transformers.js dtypes (each selects a file name suffix in a model's onnx/ folder: `q8` = model_quantized.onnx, ...). */
export const onnxDtypes = ["fp32", "fp16", "q8", "int8", "uint8", "q4", "bnb4", "q4f16"] as const;
