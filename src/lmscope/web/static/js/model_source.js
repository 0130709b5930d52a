// Where the served model came from (GET /api/model), in the page's language: the server names
// it by catalog message (`source_message`: a shipped model, a registry package, a hub id), or
// gives a path, shown as it is.

import { t } from "./catalog.js";

export function sourceText(facts) {
  const said = facts.source_message;
  return said ? t(said.id, said.values) : facts.source || facts.name;
}
