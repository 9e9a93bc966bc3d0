"""BERT-small for sequence classification, the transformer of Sage's evaluation.

"BERT-small" follows Turc et al. 2019 (google-research/bert's compact models): L=4 layers,
H=512 hidden, A=8 heads, FFN 4H=2048, WordPiece vocabulary 30522, 512 positions.  Sage trains
it on 64x512 inputs, i.e. sequences of 64 tokens at hidden size 512, so the zoo's input is
``(seq_len,)`` or ``(seq_len, hidden)``; the canonical input is ``(64, 512)``.  The classifier
reads the [CLS] token (HuggingFace ``BertForSequenceClassification`` without the tanh pooler);
dropout is left out like everywhere in the zoo.
"""
from __future__ import annotations

from socsim.workload.builder import NetBuilder
from socsim.workload.model import Model, ModelError

LAYERS, HIDDEN, HEADS, VOCAB, MAX_POSITIONS, TYPE_VOCAB = 4, 512, 8, 30522, 512, 2


def bert_small(b: NetBuilder) -> Model:
    t = b.input_shape[0]
    d = b.input_shape[1] if len(b.input_shape) == 2 else HIDDEN
    if t > MAX_POSITIONS:
        raise ModelError("input", b.input_shape,
                         f"bert-small has {MAX_POSITIONS} position embeddings; "
                         f"sequence length {t} is longer")
    if d % HEADS:
        raise ModelError("input", b.input_shape,
                         f"bert-small's hidden size {d} must be a multiple of its {HEADS} heads")
    ids = "input"  # token ids, shape (t,)
    with b.scope("embeddings"):
        x = b.add(b.embedding(ids, VOCAB, d, name="word"),
                  b.embedding(ids, MAX_POSITIONS, d, name="position"),
                  b.embedding(ids, TYPE_VOCAB, d, name="token_type"))
        x = b.layernorm(x)
    dh = d // HEADS
    for i in range(LAYERS):
        with b.scope(f"layer{i}"):
            heads = [b.reshape(b.linear(x, d, name=n), (HEADS, t, dh), name=f"{n}.heads")
                     for n in ("query", "key", "value")]
            scores = b.matmul(heads[0], heads[1], transpose_b=True, name="scores")
            probs = b.softmax(scores)  # the 1/sqrt(dh) scale is folded into the softmax
            ctx = b.matmul(probs, heads[2], transpose_b=False, name="context")
            ctx = b.transpose(ctx, (t, d), name="merge_heads")
            x = b.layernorm(b.add(b.linear(ctx, d, name="attn_out"), x, name="attn_res"),
                            name="attn_ln")
            y = b.linear(b.gelu(b.linear(x, 4 * d, name="ffn_in")), d, name="ffn_out")
            x = b.layernorm(b.add(y, x, name="ffn_res"), name="ffn_ln")
    cls = b.select(x, name="cls")
    return b.build(b.linear(cls, b.num_classes, name="classifier"), "bert-small")
