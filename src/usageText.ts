import { defaultConfig } from "./config.js";

/** `npm start -- --help`: every flag and environment variable the server reads (src/config.ts has the same table). */
export const usageText = `Usage: npm start -- [options]        (or: node dist/src/main.js [options])

Serves the models of a manifest over an OpenAI-compatible HTTP API. A flag wins over its
environment variable, which wins over the default.

Options (flag / environment variable, default):
  --host <addr>            HOST                  ${defaultConfig.host}   address to bind
  --port <n>               PORT                  ${defaultConfig.port}   port (0 = any free port)
  --models <file>          MODELS_CONFIG         ${defaultConfig.modelsConfig}   model manifest
  --threads <n>            THREADS               ${defaultConfig.threads}   CPU threads per model
  --parallel <n>           PARALLEL              ${defaultConfig.parallel}   concurrent sequences per chat model
  --queue-size <n>         QUEUE_SIZE            ${defaultConfig.queueSize}   requests that may wait per model (beyond: 503)
  --keys-file <file>       API_KEYS_FILE         ${defaultConfig.apiKeysFile}   hashed keys managed by \`npm run keys\`
                           API_KEYS              (none)   comma-separated plain API keys
  --body-limit <size>      BODY_LIMIT            ${defaultConfig.bodyLimit}   largest JSON request body (beyond: 413)
  --max-body-memory <size> MAX_BODY_MEMORY       ${megabytes(defaultConfig.maxBodyMemory)}   request bodies held in memory at once (1/16 of RAM; beyond: 503)
  --workers <n>            WORKERS               ${defaultConfig.workers}   worker threads running every ONNX model
  --embed-workers <n>      EMBED_WORKERS                  deprecated names of --workers / WORKERS
  --cors-origins <list>    CORS_ORIGINS          ${defaultConfig.corsOrigins.join(",")}
                                                          origins whose web pages may call the server ('*' = any)
  --allowed-hosts <list>   ALLOWED_HOSTS         (none)   Host names accepted without API keys besides loopback (reverse proxy)
  --metrics-public         METRICS_PUBLIC        off      serve GET /metrics without an API key
  --health-details <m>     HEALTH_DETAILS        ${defaultConfig.healthDetails}   /health without a key: public, private (status only), auto (public while no keys)
  --public-url <url>       PUBLIC_URL            (none)   base URL of image links (default: a loopback/allowed Host, else the bound address)
  --flash-attention <m>    FLASH_ATTENTION       ${defaultConfig.flashAttention}   chat models: on, off, auto (where llama.cpp supports it)
  --prompt-cache <m>       PROMPT_CACHE          ${defaultConfig.promptCache}   chat models: on, exact (bit-identical outputs only), off
  --llama-build <b>        LLAMA_BUILD           ${defaultConfig.llamaBuild}   llama.cpp binary on the CPU: native (npm run build:native), prebuilt, auto
  --reasoning-format <f>   REASONING_FORMAT      ${defaultConfig.reasoningFormat}   thinking models: parsed (reasoning_content apart), raw (as generated)
  --gpu <backend>          GPU                   ${defaultConfig.gpu}   GGUF backend: auto (a GPU only with a usable device), cuda, vulkan, metal, off
  --gpu-layers <n>         GPU_LAYERS            ${defaultConfig.gpuLayers}   layers offloaded to the GPU: auto, max or a number
  --max-connections <n>    MAX_CONNECTIONS       ${defaultConfig.maxConnections}   open connections at most (more are closed at once)
  --drain-seconds <n>      DRAIN_SECONDS         ${defaultConfig.drainSeconds}   on SIGTERM: /health/ready says 503 this long before the port closes
  --ui <m>                 UI                    ${defaultConfig.ui}   the playground page at /: on, off, auto (off beyond loopback without keys)
  --speculative <m>        SPECULATIVE           ${defaultConfig.speculative}   chat models: lookup (drafts from prompt/output), draft (manifest draftModel), off
  --draft-max <n>          DRAFT_MAX             ${defaultConfig.draftMax}   most tokens per draft
  --response-store-mb <n>  RESPONSE_STORE_MB     ${defaultConfig.responseStoreMb}   stored Responses per API key, MB of JSON (0 = none stored)
  --max-audio-seconds <n>  MAX_AUDIO_SECONDS     ${defaultConfig.maxAudioSeconds}   longest audio an upload may decode to (transcription; longer: 400)
  --download                                     off      fetch the default models first (see npm run download-models -- --help)
  --allow-unverified                             off      with --download: install files no sha256 is known for (default: refused)
  -h, --help                                              this text
                           ONNX_THREADS          ${defaultConfig.onnxThreads}   ONNX Runtime threads per worker
                           SSE_PING_MS           ${defaultConfig.ssePingMs}   SSE ping interval while no token flows
                           SHUTDOWN_TIMEOUT_MS   ${defaultConfig.shutdownTimeoutMs}   how long shutdown lets requests finish
                           HEADERS_TIMEOUT_MS    ${defaultConfig.headersTimeoutMs}   time a client has to send its request headers
                           BODY_TIMEOUT_MS       ${defaultConfig.bodyTimeoutMs}   longest pause while a request body arrives
                           REQUEST_TIMEOUT_MS    ${defaultConfig.requestTimeoutMs}   time a client has to send its whole request (not the answer)
                           KEEP_ALIVE_TIMEOUT_MS ${defaultConfig.keepAliveTimeoutMs}   idle keep-alive connections close after this
                           WRITE_TIMEOUT_MS      ${defaultConfig.writeTimeoutMs}   a response the client stops reading is cut after this
                           LOG_LEVEL             ${defaultConfig.logLevel}   silent, error, warn, info or debug
                           HF_ENDPOINT           https://huggingface.co   hub or mirror (--download)
                           HF_TOKEN              (none)   hub access token (--download)

API keys: npm run keys -- --help. Models: npm run download-models -- --help.
`;

function megabytes(bytes: number) {
    return `${Math.round(bytes / (1024 * 1024))}mb`;
}
