-- Weekly report (seed 6.3): the reports table the report's numbers must come from.
CREATE TABLE config (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE reports (week TEXT, metric TEXT, value REAL, PRIMARY KEY (week, metric));
INSERT INTO config VALUES ('current_week', '2024-W23');
INSERT INTO reports VALUES
  ('2024-W22', 'signups', 1180), ('2024-W22', 'revenue_eur', 48210.5), ('2024-W22', 'churn_pct', 2.4), ('2024-W22', 'tickets', 311),
  ('2024-W23', 'signups', 1342), ('2024-W23', 'revenue_eur', 51002.0), ('2024-W23', 'churn_pct', 2.1), ('2024-W23', 'tickets', 287);
-- The words a report names each metric by (tasks/agent/report_reader.py).
CREATE TABLE metric_words (word TEXT PRIMARY KEY, metric TEXT NOT NULL);
INSERT INTO metric_words VALUES
  ('signups', 'signups'), ('signup', 'signups'), ('registrations', 'signups'),
  ('revenue', 'revenue_eur'), ('eur', 'revenue_eur'), ('€', 'revenue_eur'),
  ('churn', 'churn_pct'), ('tickets', 'tickets'), ('ticket', 'tickets');
-- The report service: what was sent, the numbers its text states, each with the metric it is given for
-- (sent_figures; NULL: no single metric), and the digit-like text it could not read as a number (tasks/agent/number_reader.py).
CREATE TABLE sent_reports (report_id INTEGER PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE sent_numbers (report_id INTEGER NOT NULL, value REAL NOT NULL);
CREATE TABLE sent_figures (report_id INTEGER NOT NULL, metric TEXT, value REAL NOT NULL);
CREATE TABLE sent_unparsed (report_id INTEGER NOT NULL, text TEXT NOT NULL);
-- The figures the agent's messages state to the user (tasks/agent/weekly_report.py `read_message`).
CREATE TABLE stated_figures (message_id INTEGER NOT NULL, metric TEXT, value NOT NULL);
