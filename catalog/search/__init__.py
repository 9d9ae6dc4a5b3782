"""Embeddings and semantic search over the catalog (faiss), and near-duplicate detection."""
