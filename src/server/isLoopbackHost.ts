import net from "node:net";

/** Whether binding to `host` keeps the server reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
    const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
    if (bare === "localhost")
        return true;
    if (net.isIPv4(bare))
        return bare.startsWith("127.");
    if (net.isIPv6(bare))
        return bare === "::1" || /^::ffff:127\./.test(bare);
    return false;
}
