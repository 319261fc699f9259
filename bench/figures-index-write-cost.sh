#!/usr/bin/env bash
# The write cost of conversations_site_created_figures_idx on the recording path, side by side:
# pgbench runs a recording transaction (the repository's conversation INSERT and two message
# appends, with the table's triggers) with the index, then with it dropped, ROUNDS times, and
# rebuilds it. Run it on a copy of the bench database, never on a shared one:
#   createdb -h 127.0.0.1 -U postgres -T sa_bench_200k sa_bench_copy
#   BENCH_DB=sa_bench_copy BENCH_SITE_ID=… bash bench/figures-index-write-cost.sh
# Prints each run's pgbench latency and tps; deletes the rows it wrote.
set -euo pipefail
DB=${BENCH_DB:?a copy of the bench database}
SITE=${BENCH_SITE_ID:?the benched site}
ROUNDS=${ROUNDS:-3}
PSQL=(psql -h 127.0.0.1 -U postgres -v ON_ERROR_STOP=1 -qAt "$DB")
read -r ORG AGENT AGENT_NAME VERSION VERSION_ID < <("${PSQL[@]}" -F ' ' -c \
  "SELECT organization_id, agent_id, replace(agent_name, ' ', '_'), agent_version, agent_version_id
   FROM conversations WHERE site_id = '$SITE' LIMIT 1")
SCRIPT=$(mktemp)
trap 'rm -f "$SCRIPT"' EXIT
cat >"$SCRIPT" <<SQL
\set r random(1, 1000000000)
BEGIN;
INSERT INTO conversations (id, organization_id, site_id, title, channel, language, agent_id, agent_name,
  agent_version, agent_version_id, created_at, updated_at)
VALUES ('cnv_wcost_' || :client_id || '_' || :r || '_' || txid_current(), '$ORG', '$SITE', 'A recording',
  'web', 'en', '$AGENT', replace('$AGENT_NAME', '_', ' '), $VERSION, '$VERSION_ID', now(), now());
UPDATE conversations SET message_count = message_count + 2, updated_at = GREATEST(updated_at, now())
  WHERE id = 'cnv_wcost_' || :client_id || '_' || :r || '_' || txid_current();
UPDATE conversations SET message_count = message_count + 2, updated_at = GREATEST(updated_at, now())
  WHERE id = 'cnv_wcost_' || :client_id || '_' || :r || '_' || txid_current();
COMMIT;
SQL
INDEX="CREATE INDEX IF NOT EXISTS conversations_site_created_figures_idx ON conversations (site_id, created_at)
  INCLUDE (updated_at, message_count, agent_version_id, score_quality, score_service, score_trust)"
run() { pgbench -h 127.0.0.1 -U postgres -n -f "$SCRIPT" -c 2 -j 2 -T 20 "$DB" | grep -E '^(latency average|tps)' | tr '\n' ' '; }
"${PSQL[@]}" -c "$INDEX"
for round in $(seq "$ROUNDS"); do
  echo "round $round with the index: $(run)"
  "${PSQL[@]}" -c "DROP INDEX conversations_site_created_figures_idx"
  echo "round $round without it:     $(run)"
  "${PSQL[@]}" -c "$INDEX"
done
"${PSQL[@]}" -c "DELETE FROM conversations WHERE id LIKE 'cnv\_wcost\_%'"
"${PSQL[@]}" -c "VACUUM ANALYZE conversations"
