/**
 * glibc's tunable that has malloc ask the kernel for transparent huge pages on the memory it maps (KV caches, compute
 * buffers, large request buffers), as `npm start`, the Dockerfile and the systemd unit set it (docs/performance.md
 * "Huge pages"). glibc reads it at process start only.
 */
export const hugePagesTunable = "glibc.malloc.hugetlb=1";

/**
 * The environment a bench's servers run with, ours and the peer alike: the caller's, with the huge-pages tunable
 * unless the caller set GLIBC_TUNABLES (`GLIBC_TUNABLES= npm run bench:...` runs both without it). The peer gets it
 * too, so that no ratio owes anything to it.
 */
export function serverEnvironment(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return {...process.env, GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? hugePagesTunable, ...extra};
}
