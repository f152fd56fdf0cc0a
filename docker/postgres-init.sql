-- A database and role for Marquez beside Airflow's.
CREATE USER marquez WITH PASSWORD 'marquez';
CREATE DATABASE marquez OWNER marquez;
