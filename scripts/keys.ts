// Manages the hashed API keys file: `npm run keys -- add <name> | list | revoke <name>`.
import { runKeysCli } from "../src/auth/keysCli.js";

process.exitCode = await runKeysCli(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text)
});
