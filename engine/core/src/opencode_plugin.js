// sixfold's plugin for OpenCode: every tool call is judged by sixfold before it runs.
// Written by `sixfold install opencode`; `sixfold uninstall opencode` removes it (docs/live.md).
//
// Fail closed: OpenCode's configuration beside this file denies every tool until this plugin has
// loaded and lifted that itself (the `config` hook below), so a plugin that is missing or fails to
// load leaves nothing able to run. Once loaded, a call runs only when sixfold answers `allow`:
// sixfold missing, failing, answering nonsense or not answering in time is a refusal, whose
// reason the model reads as the tool's error.
import { spawn } from "node:child_process";

// The hook command, run by /bin/sh as the other agent CLIs run theirs.
const COMMAND = __SIXFOLD_HOOK_COMMAND__;
// The permission rule `sixfold install opencode` adds, and this plugin lifts once it has loaded.
const MARKER = __SIXFOLD_MARKER__;
// How long a judgement may take; past it the call is refused. SIXFOLD_OPENCODE_WAIT_MS can only
// shorten it.
const WAIT_MS = (() => {
  const asked = Number.parseInt(process.env.SIXFOLD_OPENCODE_WAIT_MS ?? "", 10);
  return Number.isFinite(asked) && asked > 0 && asked < 60000 ? asked : 60000;
})();
// Beyond the time sixfold says a person has to answer an ask.
const ASK_MARGIN_MS = 30000;
// An answer longer than this is not one sixfold wrote.
const MAX_ANSWER = 16 * 1024 * 1024;

/** Runs the hook command with `event` on its standard input; its answer, or a refusal. */
function judge(event, waitMs) {
  return new Promise((resolve) => {
    let settled = false;
    let out = "";
    let err = "";
    let child;
    let timer;
    const settle = (answer) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(answer);
      }
    };
    const refuse = (reason) => settle({ decision: "deny", reason: `sixfold: could not judge this call, so it is refused: ${reason}` });
    try {
      child = spawn("/bin/sh", ["-c", COMMAND], { stdio: ["pipe", "pipe", "pipe"], detached: true });
    } catch (e) {
      return refuse(`cannot run \`${COMMAND}\`: ${e}`);
    }
    timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      refuse(`\`${COMMAND}\` did not answer within ${waitMs} ms`);
    }, waitMs);
    child.on("error", (e) => refuse(`cannot run \`${COMMAND}\`: ${e.message}`));
    child.stdout.on("data", (d) => {
      out += d;
      if (out.length > MAX_ANSWER) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
        refuse("its answer is too long");
      }
    });
    child.stderr.on("data", (d) => {
      err = (err + d).slice(-4000);
    });
    child.on("close", (code, signal) => {
      if (code !== 0) {
        const said = err.trim() || `exit ${code ?? signal}`;
        return refuse(code === 127 ? `\`${COMMAND}\` was not found (${said})` : said);
      }
      try {
        const answer = JSON.parse(out);
        if (answer && typeof answer.decision === "string" && typeof answer.reason === "string") {
          return settle(answer);
        }
      } catch {}
      refuse(`its answer is not one sixfold gives: ${out.slice(0, 200)}`);
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

/** Puts the judged input in place: OpenCode keeps its own reference to `args`, so mutate it. */
function rewrite(args, judged) {
  if (!judged || typeof judged !== "object" || !args || typeof args !== "object") return;
  for (const key of Object.keys(args)) {
    if (!(key in judged)) delete args[key];
  }
  Object.assign(args, judged);
}

export const sixfold = async (ctx) => {
  // The names of OpenCode's MCP servers: a tool `<server>_<tool>` is that server's.
  let servers = [];
  const event = (name, input, fields) => ({
    hook_event_name: name,
    session_id: input.sessionID,
    call_id: input.callID,
    tool: input.tool,
    directory: ctx.directory,
    mcp_servers: servers,
    ...fields,
  });
  return {
    config: async (cfg) => {
      servers = Object.keys(cfg?.mcp ?? {});
      const rules = cfg?.permission;
      const star = rules && typeof rules === "object" ? rules["*"] : undefined;
      if (star && typeof star === "object" && star[MARKER] === "deny") {
        delete rules["*"];
      }
      // Says, in the resolved configuration (`opencode debug config` prints it), that this file
      // loaded: a hermetic launch's evidence that sixfold's hooks are in place.
      cfg.sixfold_plugin = import.meta.url;
    },
    "tool.execute.before": async (input, output) => {
      const answer = await judge(event("tool.execute.before", input, { args: output.args }), WAIT_MS);
      if (answer.decision === "ask" && typeof answer.wait_secs === "number") {
        // Asked: sixfold parks the call for a person (`sixfold approvals answer`) and says how
        // long it waits; the call runs, as judged, only when a person allowed it.
        const wait = Math.max(1, answer.wait_secs) * 1000 + ASK_MARGIN_MS;
        const approved = await judge(event("approval", input, { args: output.args }), wait);
        if (approved.decision === "allow") {
          rewrite(output.args, answer.args);
          return;
        }
        throw new Error(approved.reason);
      }
      if (answer.decision === "allow") {
        rewrite(output.args, answer.args);
        return;
      }
      throw new Error(answer.reason);
    },
    "tool.execute.after": async (input, output) => {
      // The outcome, for the session's record; the call has run, so nothing is refused here.
      const result = { title: output?.title, metadata: output?.metadata };
      await judge(event("tool.execute.after", input, { args: input.args, result }), WAIT_MS);
    },
  };
};
