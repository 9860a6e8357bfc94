"""``search_expand``: both searches, the seed choice and the first hop in ONE query."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, LiteralString

from amem_graph.core.seeding import (
    PEAK_FLOOR,
    TEXT_PEAK,
    TEXT_PEAK_NEXT,
    TEXT_PEAK_WIDTH,
    TIE_REL,
    Priors,
    SeedPlan,
)
from amem_graph.stores.base import (
    SIBLING_EDGES,
    Expansion,
    MemoryFilter,
    RankFields,
    SearchResult,
    prior_fields,
    search_expand_by_parts,
)
from amem_graph.stores.neo4j.ann import ann_query
from amem_graph.stores.neo4j.connection import _Reader
from amem_graph.stores.neo4j.cypher import (
    _RANK_FIELDS,
    _filter_clause,
    lucene_query,
    text_index_query,
)
from amem_graph.stores.neo4j.hood import (
    Neo4jHood,
    _hood_query,
    _HoodAsk,
    _hop_args,
    _one_scope,
)
from amem_graph.stores.neo4j.reads import _Q_AUTHORS, _read_rank_fields
from amem_graph.stores.neo4j.schema import TEXT_INDEX, VECTOR_INDEX
from amem_graph.stores.neo4j.search import (
    _BM25_SCALE,
    _Q_SEARCH_TEXT,
    _Q_SEARCH_VECTOR,
    _Q_SEARCH_VECTOR_EXACT,
    Neo4jSearch,
    _fetch_size,
    _first_fetch,
)


def _search_expand_args(
    q: list[float] | None,
    lucene: str,
    sizes: Mapping[str, int],
    v_n: int,
    plan: SeedPlan,
    names: Sequence[str],
) -> dict[str, Any]:
    """``_Q_SEARCH_EXPAND``'s parameters beside the filter's: each path's query, first fetch
    (``<prefix>n``) and size (``<prefix>k``), the plan, the hop's limits, and the names to
    check as authors (``$agents``)."""
    return {
        "v_index": VECTOR_INDEX, "v_q": q, "v_k": sizes["v_"], "v_n": v_n,
        "t_index": TEXT_INDEX, "t_q": lucene, "t_k": sizes["t_"],
        "t_n": _fetch_size(sizes["t_"]),
        "t_scale": _BM25_SCALE, "rel": TIE_REL, "rrf_k": plan.rrf_k,
        "v_w": float(plan.vector_weight), "t_w": float(plan.text_weight),
        "t_boost": float(plan.text_boost), "peak": TEXT_PEAK, "peak_width": TEXT_PEAK_WIDTH,
        "peak_next": TEXT_PEAK_NEXT, "peak_floor": PEAK_FLOOR, **_prior_args(plan.priors),
        "n_seeds": plan.seeds, "n_fetch": plan.fetch,
        "agents": list(dict.fromkeys(names)), **_hop_args(plan.limit),
    }  # fmt: skip


def _prior_args(priors: Priors | None) -> dict[str, float]:
    """The fetch's prior parameters; none adds 0 to every score (no weight)."""
    if priors is None:
        return {"rec_w": 0.0, "imp_w": 0.0, "half_life": 1.0, "now": 0.0}
    return {
        "rec_w": priors.recency_weight,
        "imp_w": priors.importance_weight,
        "half_life": priors.half_life,
        "now": priors.now,
    }


@functools.lru_cache(maxsize=64)
def _search_expand_query(
    where: LiteralString,
    vector: bool,
    text: bool,
    exact: bool = False,
    in_index: bool = False,
    one_scope: bool = False,
) -> LiteralString:
    """``_Q_SEARCH_EXPAND`` with the filter, each search path on or off (the vector one
    ``exact`` over the admitted memories, else through the index, which applies the scopes
    itself when ``in_index``: ``ann.py``), and the full hop (its walks within the one scope
    the filter names, ``one_scope``: ``hood._walk``). Kept per shape: a filter's clause
    names its values as parameters, so recalls share a few shapes, and filling the text's
    slots took ~0.1 ms a recall."""
    on = _Q_SEARCH_VECTOR_EXACT if exact else _Q_SEARCH_VECTOR
    parts = {
        "%VECTOR%": on if vector else _Q_SEARCH_NONE.replace("%P%", "v_"),
        "%TEXT%": _Q_SEARCH_TEXT if text else _Q_SEARCH_NONE.replace("%P%", "t_"),
        "%HOOD%": _hood_query(where, SIBLING_EDGES, lineage=True, one_scope=one_scope),
        "%AUTHORS%": _Q_AUTHORS,
        "%RANKS_VS%": _TIE_RANKS,
    }
    query = _Q_SEARCH_EXPAND
    for slot, part in parts.items():
        query = query.replace(slot, part)
    query = ann_query(
        query, in_index=in_index, name=VECTOR_INDEX, index="$v_index", n="$v_n", q="$v_q"
    )
    return query.replace("%FIELDS%", _RANK_FIELDS).replace("%FILTER%", where)


#: ``search_expand``: both search parts (a path that is off returns nothing), the seeds and
#: fetch list ``SeedPlan.choose`` picks from them, computed here as in Python (top $v_k/$t_k
#: by score then id; tie-aware ranks; weighted RRF summed vector part first; best first, ties
#: by id; the fetch as ``SeedPlan.fetch_ranking``: each list settled, the text weight boosted
#: by ``text_confidence``, then the recency and importance priors over the hits left, their
#: times and importance the third and fourth of each hit's columns), then ``_Q_HOOD`` from
#: those seeds, and ``authors`` of ``$agents``
_Q_SEARCH_EXPAND: Final = """
CALL { %VECTOR% }
CALL { %TEXT% }
CALL {
  WITH v_hits
  UNWIND v_hits AS h WITH h ORDER BY h[1] DESC, h[0] LIMIT $v_k
  RETURN collect([h[0], h[1], h[2], h[3]]) AS v_top
}
CALL {
  WITH t_hits
  UNWIND t_hits AS h WITH h ORDER BY h[1] DESC, h[0] LIMIT $t_k
  RETURN collect([h[0], h[1] * $t_scale, h[2], h[3]]) AS t_top
}
CALL {
  WITH t_top
  WITH [x IN t_top | x[1]] AS ts
  WITH ts, ts[1..1 + $peak_next] AS rest
  WITH ts, rest, CASE WHEN size(rest) = 0 THEN 1.0
                      ELSE reduce(s = 0.0, x IN rest | s + x) / size(rest) END AS mean
  WITH ts, rest, ts[0] / CASE WHEN mean > $peak_floor THEN mean ELSE $peak_floor END AS peak
  WITH ts, rest, ($peak - peak) / $peak_width AS minus_z
  RETURN CASE
    WHEN $t_boost = 0.0 OR $t_w <= 0.0 OR size(ts) = 0 OR ts[0] <= 0 THEN $t_w
    WHEN size(rest) = 0 THEN $t_w + $t_boost * 1.0
    WHEN minus_z < 50 THEN $t_w + $t_boost * (1.0 / (1.0 + exp(minus_z)))
    ELSE $t_w + $t_boost * 0.0 END AS t_wf
}
CALL {
  WITH v_top, t_top, t_wf
  UNWIND [[$v_w, $v_w, v_top, $v_k], [$t_w, t_wf, t_top, $t_k]] AS weighted
  WITH weighted[0] AS w, weighted[1] AS wf, weighted[2] AS top, weighted[3] AS k,
       [x IN weighted[2] | x[1]] AS vs
  WITH w, wf, top, k, %RANKS_VS% AS ranks
  WITH w, wf, top, ranks,
       CASE WHEN k > 0 AND size(top) >= k AND ranks[-1] > 1 THEN ranks[-1] - 1
            ELSE size(top) END AS settled
  UNWIND range(0, size(top) - 1) AS i
  WITH top[i][0] AS id, top[i][2] AS at, top[i][3] AS imp, w / ($rrf_k + ranks[i]) AS part,
       CASE WHEN i < settled THEN wf / ($rrf_k + ranks[i]) END AS f_part
  WITH id, at, imp, sum(part) AS score, sum(f_part) AS f_score, count(f_part) AS f_n
  ORDER BY score DESC, id
  WITH collect(id) AS ranking, collect(CASE WHEN f_n > 0 THEN [id, imp, f_score, at] END) AS fs
  CALL {
    WITH fs
    UNWIND fs AS f
    WITH f[0] AS id, f[1] AS imp, f[2] AS f_score, $now - f[3] / 1000000.0 AS age
    WITH id, imp, f_score,
         0.5 ^ (CASE WHEN age > 0.0 THEN age ELSE 0.0 END / $half_life) AS decay
    ORDER BY decay DESC, id
    WITH collect([id, imp, f_score]) AS rows, collect(decay) AS vs
    WITH rows, %RANKS_VS% AS ranks
    UNWIND range(0, size(rows) - 1) AS i
    WITH rows[i][0] AS id, rows[i][1] AS imp, rows[i][2] + $rec_w / ($rrf_k + ranks[i]) AS f_score
    ORDER BY imp DESC, id
    WITH collect([id, f_score]) AS rows, collect(imp) AS vs
    WITH rows, %RANKS_VS% AS ranks
    UNWIND range(0, size(rows) - 1) AS i
    WITH rows[i][0] AS id, rows[i][1] + $imp_w / ($rrf_k + ranks[i]) AS f_score
    ORDER BY f_score DESC, id
    RETURN collect(id) AS by_fetch
  }
  RETURN ranking, by_fetch
}
WITH v_raw, v_hits, t_raw, t_hits, ranking[..$n_seeds] AS seed_ids,
     by_fetch[..$n_fetch] AS fetch_ids
%HOOD%
CALL { %AUTHORS% }
RETURN v_raw, v_hits, t_raw, t_hits, seed_ids, fetch_ids, seeds, fetched, ids AS authors
"""
#: ``tie_ranks`` of the list ``vs`` (sorted best first): a value within ``$rel`` of the one
#: before it shares its rank
_TIE_RANKS: Final = """reduce(r = [], i IN range(0, size(vs) - 1) | r + [
         CASE WHEN i > 0 AND abs(vs[i - 1] - vs[i])
                             <= $rel * CASE WHEN abs(vs[i]) > 1.0 THEN abs(vs[i]) ELSE 1.0 END
              THEN r[i - 1] ELSE i + 1 END])"""
#: ``search_expand``'s stand-in for a path that is off
_Q_SEARCH_NONE: Final = "RETURN 0 AS %P%raw, [] AS %P%hits"


class Neo4jExpand(Neo4jSearch, Neo4jHood):
    """Recall's read: one query where ``search`` then ``neighbourhood`` would take two."""

    def search_expand(
        self,
        vector: Sequence[float] | None,
        query: str,
        n_vector: int,
        n_text: int,
        flt: MemoryFilter,
        plan: SeedPlan,
        names: Sequence[str] = (),
    ) -> Expansion:
        """Both searches, the seed choice, the first hop and the ``authors`` check of
        ``names`` in ONE query.

        The server picks the seeds with ``_Q_SEARCH_EXPAND``'s copy of ``SeedPlan.choose``;
        they are checked here against the plan applied to the lists as ``search`` returns
        them, and the hop is redone from the right seeds when they differ (a starved first
        fetch redone, or a rounding difference). Against ``search`` then ``neighbourhood`` it
        saves a round trip and the wait between them: on the settled 100k benchmark index,
        recall p50 fell from about 20 to 16 ms.
        """
        lucene = lucene_query(query) if n_text > 0 else ""

        def run() -> Expansion:
            q = self._unit_query(vector) if vector is not None and n_vector > 0 else None
            if q is None and vector is not None and n_vector > 0:
                return search_expand_by_parts(
                    self._whole(), vector, query, n_vector, n_text, flt, plan, names
                )
            where, params = _filter_clause(flt)
            sizes = {"v_": n_vector if q is not None else 0, "t_": n_text if lucene else 0}
            v_n = self._vector_fetch(flt, sizes["v_"]) if sizes["v_"] else 0
            t_q = text_index_query(lucene, flt.scopes) if lucene else ""
            v_fetch = v_n or _fetch_size(sizes["v_"])
            params.update(_search_expand_args(q, t_q, sizes, v_fetch, plan, names))
            ask = _HoodAsk(flt, params["limit"], SIBLING_EDGES, True, params)
            redo: dict[str, Callable[[], list[tuple[str, float]]]] = {
                "v_": lambda: self.vector_search(vector or [], n_vector, flt),
                "t_": lambda: self.text_search(query, n_text, flt),
            }
            cypher = _search_expand_query(
                where,
                vector=sizes["v_"] > 0,
                text=sizes["t_"] > 0,
                exact=v_n is None,
                in_index=self._scope_in_index(flt),
                one_scope=_one_scope(flt),
            )
            return self._read(lambda tx: self._expansion(tx, cypher, sizes, redo, plan, ask))

        return self._guard("searching", run)

    def _expansion(
        self,
        tx: _Reader,
        cypher: LiteralString,
        sizes: Mapping[str, int],
        redo: Mapping[str, Callable[[], list[tuple[str, float]]]],
        plan: SeedPlan,
        ask: _HoodAsk,
    ) -> Expansion:
        """Run ``_Q_SEARCH_EXPAND``; each path's top ``sizes[prefix]`` (``redo`` when its first
        fetch starved), then the hop it read if its seeds are the plan's, else a new one."""
        rec = tx.run(cypher, ask.params).single(strict=True)
        fields: dict[str, RankFields] = {}
        lists: dict[str, list[tuple[str, float]]] = {}
        for prefix, n in sizes.items():
            hits = _first_fetch(rec, prefix, n, fields, ask.params[f"{prefix}n"]) if n else []
            lists[prefix] = redo[prefix]() if hits is None else hits
        by_vector, by_text = lists["v_"], lists["t_"]
        missing = [i for i, _ in by_vector + by_text if i not in fields]
        if missing:
            fields.update(_read_rank_fields(tx, ask.flt, missing))
        found = SearchResult(by_vector, by_text, fields)
        depths = (sizes["v_"], sizes["t_"])
        seeds, fetch_ids = plan.choose(by_vector, by_text, prior_fields(fields), depths)
        if set(seeds) != set(rec["seed_ids"]) or set(fetch_ids) != set(rec["fetch_ids"]):
            hood = self.neighbourhood(sorted(seeds), ask.flt, plan.limit, fetch_ids)
        else:
            hood = self._hood_from(rec, sorted(seeds), ask)
        return Expansion(found, seeds, hood, frozenset(str(a) for a in rec["authors"]))
