"""Tiny HF transformers models built from their config (random weights, no
download) for `python -m zoffload.capture`; tools/capture_models.py runs
them all.  Each build_X() returns the model; step(model, i) is one
training step as HF users write it: model(input_ids=..., labels=...),
loss.backward(), SGD step."""
import torch

STEPS = 1
VOCAB = 64
SEQ = 8


def _ids(n=SEQ, vocab=VOCAB, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, vocab, (1, n), generator=g)


def _train(model):
    model.train()
    model.zo_opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    return model


def build_gpt2():
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=32, n_embd=16, n_layer=2, n_head=2, use_cache=False)
    return _train(GPT2LMHeadModel(cfg))


def build_bert():
    from transformers import BertConfig, BertForMaskedLM
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32)
    return _train(BertForMaskedLM(cfg))


def build_albert():
    from transformers import AlbertConfig, AlbertForMaskedLM
    torch.manual_seed(0)
    cfg = AlbertConfig(vocab_size=VOCAB, embedding_size=8, hidden_size=16, num_hidden_layers=3,
                       num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
    return _train(AlbertForMaskedLM(cfg))


def build_t5():
    from transformers import T5Config, T5ForConditionalGeneration
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=VOCAB, d_model=16, d_kv=8, d_ff=32, num_layers=1, num_decoder_layers=1,
                   num_heads=2, use_cache=False, decoder_start_token_id=0, pad_token_id=0)
    return _train(T5ForConditionalGeneration(cfg))


def _llama_cfg(**kw):
    from transformers import LlamaConfig
    base = dict(vocab_size=VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32, use_cache=False)
    base.update(kw)
    return LlamaConfig(**base)


def build_llama():
    from transformers import LlamaForCausalLM
    torch.manual_seed(0)
    return _train(LlamaForCausalLM(_llama_cfg()))


def build_llama_ckpt():
    """gradient_checkpointing_enable() exactly as HF users call it: in
    transformers 5.24.0 use_reentrant=False (its default), each decoder
    layer's forward body checkpointed (GradientCheckpointingLayer)."""
    m = build_llama()
    m.gradient_checkpointing_enable()
    return m


def build_gpt2_ckpt():
    """GPT-2 with gradient_checkpointing_enable() (GPT2Block is a
    GradientCheckpointingLayer in transformers 5.24.0; non-reentrant)."""
    m = build_gpt2()
    m.gradient_checkpointing_enable()
    return m


def build_bert_ckpt():
    """BERT with gradient_checkpointing_enable() (BertLayer is a
    GradientCheckpointingLayer in transformers 5.24.0; non-reentrant)."""
    m = build_bert()
    m.gradient_checkpointing_enable()
    return m


def build_llama_ckpt_reentrant():
    m = build_llama()
    m.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
    return m


def build_mixtral():
    from transformers import MixtralConfig, MixtralForCausalLM
    torch.manual_seed(0)
    cfg = MixtralConfig(vocab_size=VOCAB, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                        num_attention_heads=2, num_key_value_heads=1, num_local_experts=4,
                        num_experts_per_tok=2, max_position_embeddings=32, use_cache=False)
    return _train(MixtralForCausalLM(cfg))


def build_lora():
    from peft import LoraConfig, get_peft_model
    base = build_llama()
    cfg = LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"], lora_dropout=0.0)
    m = get_peft_model(base, cfg)
    return _train(m)


def build_llama70b_meta():
    """LLaMA-2-70B's config on the meta device: 80 layers, 69B parameters."""
    from transformers import LlamaForCausalLM
    cfg = _llama_cfg(vocab_size=32000, hidden_size=8192, intermediate_size=28672, num_hidden_layers=80,
                     num_attention_heads=64, num_key_value_heads=8, max_position_embeddings=4096)
    with torch.device("meta"):
        m = LlamaForCausalLM(cfg)
    return _train(m)


def step(model, i):
    dev = next(model.parameters()).device
    ids = _ids(seed=i).to(dev)
    if model.config.is_encoder_decoder:
        out = model(input_ids=ids, labels=_ids(seed=100 + i).to(dev))
    else:
        out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    model.zo_opt.step()
    model.zo_opt.zero_grad()


def step_meta(model, i):
    """step() for a model on the meta device: a ready 4D attention mask
    (transformers' mask code otherwise inspects the mask and position_ids
    by value, .item(), which meta tensors cannot) and the loss from the
    logits (no data-dependent label handling)."""
    ids = _ids(seed=i).to("meta")
    mask = torch.zeros(1, 1, SEQ, SEQ, device="meta")
    out = model(input_ids=ids, attention_mask=mask)
    out.logits.float().mean().backward()
    model.zo_opt.step()
    model.zo_opt.zero_grad()


def build_llama32():
    """A LLaMA-7B-shaped stack (32 decoder layers, GQA) with a tiny hidden
    size: 421 modules and 291 parameters, beyond the fuzzer-byte codec's 254
    (it lives in .scn text only)."""
    from transformers import LlamaForCausalLM
    torch.manual_seed(0)
    return _train(LlamaForCausalLM(_llama_cfg(num_hidden_layers=32)))
