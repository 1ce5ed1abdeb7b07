"""docs/bpf-objects.md's generated block: what the simulator offers a compiled BPF object (hooks,
helpers, kfuncs, kernel config values, socket fields and what each holds), as the core's
registry says (:func:`vegaslab.registry.bpf`, from the ``vegaslab-bpf`` crate's tables)."""

from __future__ import annotations

from .render import replace_blocks
from .paths import BPF_DOC
from .values import cell


def render_bpf_offer() -> str:
    from vegaslab import registry

    b = registry.bpf()
    lines = [
        f"- **Hooks** the simulator calls: {', '.join(f'`{h}`' for h in b.hooks)}.",
        f"- **Helpers**: {', '.join(f'`{name}` (#{hid})' for hid, name in b.helpers)}.",
        f"- **Kfuncs**: {', '.join(f'`{k}`' for k in b.kfuncs)}.",
        f"- **Kernel config** (`extern ... __kconfig`): {', '.join(f'`{k}`' for k in b.kconfig)}; "
        f"`hz` one of {', '.join(str(v) for v in b.hz_values)} (default {b.hz_default}).",
        "",
        "| struct | field | bytes | what the simulator keeps there |",
        "|---|---|---|---|",
    ]
    for f in b.fields:
        width = f"{f.bytes}" + (f" (bits {f.bits[0]}-{f.bits[0] + f.bits[1] - 1})" if f.bits and f.bits[1] > 1
                                else f" (bit {f.bits[0]})" if f.bits else "") + (", signed" if f.signed else "")
        lines.append(f"| `{f.struct}` | `{f.member}` | {width} | {cell(f.holds)} |")
    return "\n".join(lines)


def render_bpf_doc(text: str) -> str:
    """``text`` (docs/bpf-objects.md) with its generated block replaced by what the core says now."""
    return replace_blocks(text, {"bpf-offer": render_bpf_offer}, BPF_DOC.name)
