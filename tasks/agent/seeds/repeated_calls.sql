-- Repeated-call padding (seed 4.2): a document index to search.
CREATE TABLE documents (doc_id TEXT PRIMARY KEY, title TEXT, body TEXT);
INSERT INTO documents VALUES
  ('D1', 'Refund policy', 'Refunds are possible within 30 days of delivery.'),
  ('D2', 'Shipping times', 'Standard shipping takes 3 to 5 working days.'),
  ('D3', 'Warranty', 'Electronics carry a two year warranty.');
