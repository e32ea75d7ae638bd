-- Repeated-call padding (seed 4.2): a document index to search.
CREATE TABLE documents (doc_id TEXT PRIMARY KEY, title TEXT, body TEXT);
INSERT INTO documents VALUES
  ('D1', 'Refund policy', 'Refunds are possible within 30 days of delivery.'),
  ('D2', 'Shipping times', 'Standard shipping takes 3 to 5 working days.'),
  ('D3', 'Warranty', 'Electronics carry a two year warranty.');
-- What the agent's messages told the user (tasks/agent/repeated_calls.py `read_message`): the documents
-- cited and the numbers stated, each with whether a document a search returned backs it.
CREATE TABLE stated_docs (message_id INTEGER NOT NULL, doc_id TEXT NOT NULL, found INTEGER NOT NULL);
CREATE TABLE stated_numbers (message_id INTEGER NOT NULL, value NOT NULL, backed INTEGER NOT NULL);
