import fs from "node:fs/promises";
import path from "node:path";

const runPrefix = "run-";

/**
 * The folder of one server run's files under the cache folder (`--cache-dir`): `<cacheDir>/run-<pid>-<random>`,
 * mode 0700, made on first use and removed at close. Opening it removes the folders of earlier runs whose
 * process is gone (a crash, a kill), never those of a server still running beside this one (tests, a second
 * instance on another port share the cache folder).
 */
export class RunFolder {
    private made: Promise<string> | null = null;
    private closed = false;

    private constructor(readonly cacheDir: string) {}

    /** The run folder of this process under `cacheDir`, the leftovers of dead runs removed first. */
    static async open(cacheDir: string): Promise<RunFolder> {
        await removeDeadRuns(cacheDir);
        return new RunFolder(cacheDir);
    }

    /** The folder's path, made (with the cache folder, both 0700) on the first call. */
    path(): Promise<string> {
        if (this.closed)
            return Promise.reject(new Error("The run folder was removed: the server is shutting down"));
        return this.made ??= (async () => {
            await fs.mkdir(this.cacheDir, {recursive: true, mode: 0o700});
            return fs.mkdtemp(path.join(this.cacheDir, `${runPrefix}${process.pid}-`));
        })();
    }

    /** Removes the folder and everything in it; later calls of `path` fail. */
    async remove() {
        this.closed = true;
        // A folder that could not be made (its error went to whoever asked for it) has nothing to remove.
        const folder = await this.made?.catch(() => null);
        if (folder != null)
            await fs.rm(folder, {recursive: true, force: true});
    }
}

async function removeDeadRuns(cacheDir: string) {
    let names: string[];
    try {
        names = await fs.readdir(cacheDir);
    } catch {
        return;
    }
    await Promise.all(names.map(async (name) => {
        const pid = Number(/^run-(\d+)-/.exec(name)?.[1] ?? Number.NaN);
        if (Number.isInteger(pid) && !isAlive(pid))
            await fs.rm(path.join(cacheDir, name), {recursive: true, force: true});
    }));
}

function isAlive(pid: number) {
    try {
        process.kill(pid, 0);
        return true;
    } catch (error) {
        // EPERM: a process of another user has that id, alive.
        return (error as NodeJS.ErrnoException).code === "EPERM";
    }
}
