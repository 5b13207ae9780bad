import net from "node:net";

export type RawAnswer = {status: number, headers: Record<string, string>, body: string};

/**
 * One HTTP/1.1 connection written by hand: a test sends the head and as much of a body as it likes
 * (a stalled upload, a body cut in the middle), then reads the answer, which may come before the body
 * is complete. Header names of the answer are lowercased.
 */
export class RawConnection {
    #received = Buffer.alloc(0);
    #closed = false;
    #waiters: (() => void)[] = [];

    private constructor(readonly socket: net.Socket) {
        socket.on("data", (chunk: Buffer) => {
            this.#received = Buffer.concat([this.#received, chunk]);
            this.#wake();
        });
        socket.on("close", () => {
            this.#closed = true;
            this.#wake();
        });
        socket.on("error", () => {});
    }

    /** Connects to the host and port of `url`. */
    static open(url: string): Promise<RawConnection> {
        const {hostname, port} = new URL(url);
        return new Promise((resolve, reject) => {
            const socket = net.connect(Number(port), hostname.replace(/^\[|\]$/g, ""), () => resolve(new RawConnection(socket)));
            socket.once("error", reject);
        });
    }

    /** The request line and headers (with `Host` from `url`), then `body` (all, part or none of it). */
    static async request(url: string, method: string, headers: Record<string, string | number>, body: string | Buffer = ""): Promise<RawConnection> {
        const connection = await RawConnection.open(url);
        const {host, pathname, search} = new URL(url);
        const head = [`${method} ${pathname}${search} HTTP/1.1`, `Host: ${host}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)].join("\r\n");
        await connection.write(Buffer.concat([Buffer.from(head + "\r\n\r\n"), Buffer.from(body)]));
        return connection;
    }

    write(data: string | Buffer): Promise<void> {
        return new Promise((resolve, reject) => this.socket.write(data, (error) => error == null ? resolve() : reject(error)));
    }

    /** The first answer on the connection: resolves once its head and its whole body (by Content-Length, or the close) are in. */
    async answer(): Promise<RawAnswer> {
        for (;;) {
            const parsed = this.#parse();
            if (parsed != null)
                return parsed;
            if (this.#closed)
                throw new Error(`The connection closed without a complete answer (received: ${JSON.stringify(this.#received.toString("latin1").slice(0, 200))})`);
            await new Promise<void>((resolve) => this.#waiters.push(resolve));
        }
    }

    /** The status of the first head the server sent on the connection: an interim `100 Continue` counts. */
    async firstStatus(): Promise<number> {
        for (;;) {
            const end = this.#received.indexOf("\r\n\r\n");
            if (end >= 0)
                return Number(this.#received.subarray(0, end).toString("latin1").split(" ")[1]);
            if (this.#closed)
                throw new Error("The connection closed before the server sent a head");
            await new Promise<void>((resolve) => this.#waiters.push(resolve));
        }
    }

    /** Forgets what was received so far (after an interim `100 Continue`, so that answer() reads the final one). */
    skipReceived(): void {
        this.#received = this.#received.subarray(this.#received.indexOf("\r\n\r\n") + 4);
    }

    /** Resolves when the server has closed the connection. */
    async closed(): Promise<void> {
        while (!this.#closed)
            await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }

    destroy(): void {
        this.socket.destroy();
    }

    #parse(): RawAnswer | null {
        const end = this.#received.indexOf("\r\n\r\n");
        if (end < 0)
            return null;
        const [statusLine, ...lines] = this.#received.subarray(0, end).toString("latin1").split("\r\n");
        const headers: Record<string, string> = {};
        for (const line of lines) {
            const colon = line.indexOf(":");
            headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        const body = this.#received.subarray(end + 4);
        const length = headers["content-length"] == null ? null : Number(headers["content-length"]);
        if (length != null ? body.length < length : !this.#closed)
            return null;
        return {status: Number(statusLine.split(" ")[1]), headers, body: body.subarray(0, length ?? body.length).toString("utf8")};
    }

    #wake() {
        for (const waiter of this.#waiters.splice(0))
            waiter();
    }
}
